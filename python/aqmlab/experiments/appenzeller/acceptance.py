"""Digest 003 section 6, the acceptance references R1-R22 of seed 003, for the report's
table (aqmlab.report)."""

from __future__ import annotations


#: Digest 003 section 6: each acceptance reference's statement, and why it is not (or not
#: wholly) reproduced where that is known; the report's table of R1-R22 (aqmlab.report).
ACCEPTANCE: dict[str, tuple[str, str]] = {
    "R1": ("Single flow: B = 2T_pC is necessary and sufficient for 100% utilization; period 30.2 s (1.5 B²/C); "
           "B = 100 < BDP leaves the queue empty for a while and U < 100%", ""),
    "R2": ("Synchronized flows need B = 2T̄_pC regardless of n; two flows in ns-2 synchronize (Fig 3.1)", ""),
    "R3": ("Desynchronized flows: σ_Q ≤ (2T̄_pC + B)/(3√3·√n); Util ≥ erf(1.8371·B√n/(2T̄_pC + B)); the "
           "window sum is Gaussian (Fig 3.2)",
           "The formulas reproduce; the simulated sum is Gaussian and its s.d. falls as 1/√n, but it is 4.5 times "
           "the bound, in ns-2 as in aqmlab: Reno's windows spread 3 times more than the uniform sawtooth the "
           "bound assumes (appenzeller.fig3_2)."),
    "R4": ("n = 10,000: 1× BDP/√n → ≥ 98.99%; 2× → ≥ 99.99997% (1.5× printed 99.99988%, recomputes to 99.988%)",
           "The 1.5× value is the thesis's typo (digest 7.4)."),
    "R5": ("Minimum buffer for 95% utilization matches the model for n ≳ 50; synchronization below 50 (Fig 3.4)", ""),
    "R6": ("Synchronization common below 100 flows, rare above 500 (ns-2)",
           "Qualitative; checked as the windows' correlation at 1000 flows (appenzeller.fig3_2) and two flows "
           "in step (appenzeller.fig3_1, R2)."),
    "R7": ("20 Mb/s, 130 ms, B = 500 (> BDP 325): 100% utilization at any n; B = 50/100: utilization rises "
           "with n to 100%; goodput falls slightly with n (Fig 5.1)", ""),
    "R8": ("OC3, n = 50-500: the buffer for 98→99.9% grows by much less than 2× at n = 400; 2·BDP/√n gives "
           "≈ 100% (Fig 5.2 top)", ""),
    "R9": ("20 Mb/s (BDP 325): the rule holds for n ≥ 100 at 99.9% even with timeouts; slightly more is needed "
           "when n > BDP (Fig 5.2 bottom)", ""),
    "R10": ("Short flows: the mean queue depends only on ρ and l, not on C; 5/10/25 and 40/80/200 Mb/s nearly "
            "identical; l = 14 above l = 16 (Figs 4.2, 5.3)", ""),
    "R11": ("The effective-bandwidth tail e^(−κb) upper-bounds the simulated queue distribution at ρ = 0.85: "
            "tight for l = 2, loose for l = 62 (Fig 4.3)",
            "Tight for l = 62 too: our ACK-clocked bursts stay below the exact tail of bursts arriving at once, "
            "but the thesis's 2nd-order tail is below that exact tail by about as much (appenzeller.fig4_3)."),
    "R12": ("An access link 10× slower than the bottleneck needs much less buffer; 5 vs 50 Mb/s access barely "
            "differ (Fig 5.4)",
            "A 10x slower access saves a sixth of the buffer, not much: it spreads each flow's bursts but not "
            "the number of flows sending at once (appenzeller.fig5_4)."),
    "R13": ("50 Mb/s short flows: AFCT = 350 ms at light load; B = 10 unstable beyond ~75% load; B = 40 fine to "
            "~90% (Fig 5.5)", ""),
    "R14": ("Mix 20% short / 80% long, BDP 4230: minimum buffer ≈ 0.8·4230/√n, from about 150 flows (Fig 5.6)",
            "From 150 to 400 flows 0.59-0.87x the rule; 0.48x at 500 (the rule grows conservative). Needs ns-2's "
            "RTT estimator: with RFC 6298's per-ACK samples the 677 ms round trip fires spurious timeouts once "
            "the buffer passes 2x the rule, and utilization falls as the buffer grows (appenzeller.fig5_6)."),
    "R15": ("AFCT much lower with BDP/√n buffers than with BDP buffers (n = 1-500 long flows, 20% short; "
            "Fig 5.7)", ""),
    "R16": ("Short fractions 10/20/30%: minimum buffer for 95% identical above ~110 flows; short-only threshold "
            "~100 packets; AFCT within a few % across ratios (Fig 5.8)",
            "Above 110 flows the three ratios' buffers keep the model's 0.9 : 0.8 : 0.7 proportion instead of "
            "converging; the model holds at all 18 points (appenzeller.fig5_8)."),
    "R17": ("Pareto, 155 Mb/s: B = BDP: utilization 100%, queue 800-1600, 60-160 flows in CA, loss ~1%; "
            "B = 165: utilization > 99%, queue 0-165, > 100 flows in CA (Figs 5.9, 5.10)",
            "Loss 3.2% (5.5% with B = 165) against ~1%, and the large buffer's queue dips to 623 once: the load "
            "that gives the thesis's picture keeps about 600 flows active here, where its 1% points to 250-300; at "
            "its nominal 1.02 our loss is its 1% but the link is 77-90% used. ns-2 2.35 running the script's Reno on "
            "the same flows gives the same picture and loses more: the printed setup does not give the thesis's "
            "(appenzeller.fig5_9, fig5_10; bench/ns2/appenzeller_pareto.py)."),
    "R18": ("GSR OC3 (RTT·C = 1291): utilization 94.9/98.1/99.8/99.7% (n = 100, 0.5-3× BDP/√n) ... "
            "99.5/100/100/99.9% (n = 400) (Fig 6.1)",
            "Simulated with the router's 43-packet hidden FIFO counted as buffer (appenzeller.fig6_1); its "
            "testbed fidelity (n = 100, 400 at 0.5x and 2x, an eighth of OC3) holds on the emulator too, "
            "with Linux's TCP."),
    "R19": ("GSR short flows, ρ ≈ 0.85: M/G/1 matches l = 62, overestimates l = 30; l = 14 queue non-empty in "
            "< 1% of samples (Figs 6.2-6.4)",
            "l = 14 and 6 exceed the 43-packet FIFO in 9% and 1.6% of samples (router: < 1%), which the thesis "
            "puts down to smoothing by its switches and hosts (appenzeller.fig6_2)."),
    "R20": ("Stanford VXR at 20 Mb/s: 500 → 99.92%, 85 → 98.55%, 65 → 97.55%, 46 → 97.41% (Fig 6.9)",
            "Simulated from its reported traffic: 400 greedy flows keep the link full at every buffer, an upper "
            "bound on the router's (appenzeller.fig6_9)."),
    "R21": ("Rule-of-thumb examples: 10 Gb/s × 250 ms = 2.5 Gbit; 40 Gb/s card → 10 Gbit; 10 Gb/s with 50,000 "
            "flows → about 10 Mbit; 2.5 Gb/s with 10,000 flows → 99% less", ""),
    "R22": ("Rule-of-thumb buffers add one RTT of queueing per congested hop; RTT ratio small/large buffers "
            "(1 + 1/√n)/2 → 0.55 at n = 100", ""),
}
