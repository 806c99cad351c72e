"""``aqmlab size`` and ``aqmlab size plot``: output, JSON and bad input (exit status 2)."""

import json
import math

import pytest
from typer.testing import CliRunner

from aqmlab.theory.cli import size_app

runner = CliRunner()


def run(*args):
    return runner.invoke(size_app, list(args))


def j(*args):
    res = run(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def lines(d):
    return {ln["key"]: ln for ln in d["lines"]}


def test_text_output_has_every_line():
    res = run("--rate", "10Gbps", "--rtt", "250ms", "--flows", "50000", "--short-load", "0.2")
    assert res.exit_code == 0, res.output
    for word in ("Rule of thumb", "sqrt(n)", "utilization (Eq 3.7)", "Short-flow buffer",
                 "Recommended", "packets", "bytes", "delay", "model:"):
        assert word in res.stdout


def test_r21_10gbps_250ms_50000_flows():
    # thesis Abstract / section 1.1.1: RTT x C = 2.5 Gbit; BDP/sqrt(n) "about 10 Mbit" (11.2)
    d = lines(j("--rate", "10Gbps", "--rtt", "250ms", "--flows", "50000"))
    assert d["rule_of_thumb"]["bytes"] * 8 == pytest.approx(2.5e9)
    assert d["rule_of_thumb"]["delay_ms"] == pytest.approx(250)
    assert d["sqrt_n"]["bytes"] * 8 == pytest.approx(11.18e6, rel=1e-3)
    assert d["sqrt_n"]["delay_ms"] == pytest.approx(250 / math.sqrt(50000))


def test_r21_2_5gbps_10000_flows_99_percent():
    d = lines(j("--rate", "2.5Gb/s", "--rtt", "250ms", "--flows", "10000"))
    assert 1 - d["sqrt_n"]["packets"] / d["rule_of_thumb"]["packets"] == pytest.approx(0.99)
    # the target line at 99 % is Eq 3.7 inverted: 1.001 x BDP/sqrt(n) at n = 10000
    assert d["target"]["packets"] / d["sqrt_n"]["packets"] == pytest.approx(1.001, abs=5e-4)


def test_stanford_bracket():
    # thesis section 6.2: 3400 flows, UDP 1000..2000, web 500..1000 -> n in [400, 1900];
    # 20 Mb/s x 250 ms in 557.1 B packets; B_max = 1121/sqrt(400) = 56 packets (Eq 6.7)
    out = j("--rate", "20Mbps", "--rtt", "250ms", "--packet", "557.1B", "--flows-total", "3400",
            "--udp-flows", "1000..2000", "--web-flows", "500..1000")
    assert out["inputs"]["flows"] == [400, 1900]
    assert round(lines(out)["sqrt_n"]["packets"]) == 56
    assert any("n = 1900 gives 25.7" in n for n in lines(out)["sqrt_n"]["notes"])  # Eq 6.6: 26


def test_rtt_range_and_list():
    a = j("--rate", "155Mbps", "--rtt", "80ms..98ms", "--packet", "1000B")
    b = j("--rate", "155Mbps", "--rtt", "80ms,89ms,98ms", "--packet", "1000B")
    assert a["inputs"]["rtt_s"] == pytest.approx(0.089)
    assert b["inputs"]["rtt_s"] == pytest.approx(0.089)
    # digest 003 section 3.3: C = 19,375 pkt/s, BDP ~ 1724 packets at 89 ms
    assert a["inputs"]["bdp_packets"] == pytest.approx(1724, abs=1)


def test_few_flows_warns_and_recommends_rule_of_thumb():
    res = run("--rate", "155Mbps", "--rtt", "100ms", "--flows", "10")
    assert res.exit_code == 0
    assert "synchroniz" in res.stdout
    d = lines(j("--rate", "155Mbps", "--rtt", "100ms", "--flows", "10"))
    assert d["recommended"]["packets"] == math.ceil(d["rule_of_thumb"]["packets"])


def test_mix_uses_long_share_and_short_buffer():
    d = lines(j("--rate", "50Mbps", "--rtt", "676.8ms", "--packet", "1000B", "--flows", "100",
                "--short-load", "20%", "--short-length", "14"))
    # Fig 5.6 model: 0.8 x 4230/sqrt(100) = 338 packets
    assert d["sqrt_n"]["packets"] == pytest.approx(338, abs=0.5)
    # short flows, rho = 0.2, l = 14, P(Q >= B) = 1e-3: ln(1000)/kappa2
    from aqmlab.theory import short_flows as sf
    assert d["short"]["packets"] == pytest.approx(sf.eb_buffer_for_loss(1e-3, 0.2, 14))
    assert d["recommended"]["packets"] == math.ceil(max(d["target"]["packets"], d["short"]["packets"]))


def test_smoothed_short_flows_md1():
    d = lines(j("--rate", "1Gbps", "--rtt", "10ms", "--short-load", "0.9", "--smoothed"))
    assert d["short"]["packets"] == pytest.approx(31.1, abs=0.05)  # M/D/1 table, rho = 0.9
    assert d["recommended"]["packets"] == math.ceil(d["short"]["packets"])


def test_eb_orders():
    p = {o: lines(j("--rate", "1Gbps", "--rtt", "10ms", "--short-load", "0.85",
                    "--short-length", "62", "--eb-order", o))["short"]["packets"]
         for o in ("2", "3", "exact")}
    assert p["2"] == pytest.approx(430.6, abs=0.05)
    assert p["3"] == pytest.approx(478.9, abs=0.05)
    assert p["exact"] == pytest.approx(482.9, abs=0.05)


@pytest.mark.parametrize("args, field", [
    (["--rate", "-10Gbps", "--rtt", "250ms"], "--rate"),
    (["--rate", "10Gbps", "--rtt", "250ms", "--flows", "0"], "--flows"),
    (["--rate", "10Gbps", "--rtt", "250ms", "--flows", "100", "--target-util", "100%"], "--target-util"),
    (["--rate", "10Gbps", "--rtt", "250ms", "--flows", "100", "--target-util", "1.2"], "--target-util"),
    (["--rate", "10Gbbs", "--rtt", "250ms"], "--rate"),
    (["--rate", "10Gbps", "--rtt", "250 fortnights"], "--rtt"),
    (["--rate", "10Gbps", "--rtt", "250ms", "--packet", "1500"], "--packet"),
    (["--rate", "10Gbps", "--rtt", "250ms", "--short-load", "1.0"], "--short-load"),
    (["--rate", "10Gbps", "--rtt", "250ms", "--short-load", "0.5", "--short-length", "x"], "--short-length"),
    (["--rate", "10Gbps", "--rtt", "250ms", "--short-load", "0.5", "--eb-order", "4"], "--eb-order"),
    (["--rtt", "250ms"], "--rate"),
    (["--rate", "10Gbps", "--rtt", "250ms", "--flows-total", "100", "--udp-flows", "200"], "--flows-total"),
])
def test_bad_input_exit_2(args, field):
    res = run(*args)
    assert res.exit_code == 2, res.output
    assert field in res.stderr
    assert "Traceback" not in res.output
    assert res.stdout == ""


def test_plot_writes_pngs(tmp_path):
    out = tmp_path / "plots"
    res = run("plot", "--out-dir", str(out), "--flows", "50,100,1000", "--short-length", "2,62",
              "--json")
    assert res.exit_code == 0, res.output
    files = json.loads(res.stdout)["files"]
    assert len(files) == 2
    for f in files:
        with open(f, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args, field", [
    (["plot", "--flows", "0,10"], "--flows"),
    (["plot", "--rate", "fast"], "--rate"),
    (["plot", "--short-load", "1.5"], "--short-load"),
])
def test_plot_bad_input(args, field, tmp_path):
    res = run(*args, "--out-dir", str(tmp_path))
    assert res.exit_code == 2
    assert field in res.stderr
