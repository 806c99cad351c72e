#
# appenzeller_pareto.tcl: seed 003's Pareto experiment (Figs 5.9-5.10, section 5.5) in
# ns-2 2.35, in the style of Appenzeller's script "TcpSim" (thesis Appendix A.4; digest
# 003 section 3). Parameters are the defaults below; any of them can be given on the
# command line as name-value pairs:
#
#     ns appenzeller_pareto.tcl load 1.3 bneck_buffer 1650 time_length 70 time_startphase 40
#
# Every time_slice it prints one line on stdout:
#     slice T active A ca C queue Q departures D drops P arrivals R
# A: flows started and not finished whose SYN is acknowledged; C: those of them with
# cwnd_ >= ssthresh_ (congestion avoidance); Q: the bottleneck's queue (packets) at T;
# D, P, R: packets that left, were dropped at and arrived at the bottleneck in the slice.
# At the end one line:
#     summary util U loss L flows N finished F
# over the measurement window (time_startphase to time_length): U the bytes that left the
# bottleneck over its capacity, L drops over arrivals, N the flows started, F finished.
#
# From the thesis (Appendix A.4, section 5.5):
#   - the header's names, units and defaults: load, bw in MB/s (19.375 = OC3),
#     flows_data_kb (the mean flow length, packets), bneck_buffer, time_length,
#     time_slice 0.05 s, time_startphase time_length/3, bneck_lat 20 ms, DropTail,
#     access links at 100 x the bottleneck rate with a 32000-packet queue client ->
#     router, max_receiver_window 10000, packet_len 960;
#   - the arrival rate: flows_n = load x bw x 1000 / flows_data_kb flows a second,
#     exponential interarrival times; RandomVariable/Pareto lengths with avg_
#     flows_data_kb and shape_ 1.2;
#   - the topology (server, router, one client node per access link) and the kept
#     packet headers; TCP Reno, ns-2's one-way agent, with a TCPSink on the server.
#
# Ours (the rest of the script is not printed in the thesis):
#   - static routing (nix routing fails on this topology in ns-2 2.35 (Debian));
#   - clients client nodes, access latency uniform in [access_lat_min, access_lat_max)
#     ms (20-40: 2T_p of 80-120 ms, "approximately 100ms"), or the list access_lats;
#   - a flow is a fresh Agent/TCP/Reno and TCPSink on a client drawn uniformly, sent
#     its length with advanceby (agents fresh); or (agents pool) a finished flow's agent
#     and sink go back to their client's pool and the client's next flow takes them, its
#     cwnd_, ssthresh_ and RTT estimate as the last transfer left them (ns-2 cancels the
#     retransmission timer when all data are acknowledged, so slow_start_restart_ never
#     acts on an idle agent);
#   - the length is int(value) + 1 packets of a Pareto draw (at least one), the arrival
#     RNG and the length RNG seeded from seed (the thesis: seed 0, a fresh seed per run);
#     or flows_file, one flow a line "start client packets", replaces the draws, so that
#     a driver can run the very flows of another simulator's run;
#   - every queue but the bottleneck's is 32000 packets: only the bottleneck drops;
#   - tcp_vars (name-value pairs) sets more Agent/TCP variables.
#

# Defaults (thesis)
set load 1.02
set bw 19.375          ;# OC3 speed, 155 Mb/s (MBytes/s)
set flows_data_kb 30   ;# 30 packets per flow (mean)
set bneck_buffer 1650  ;# Buffer of RTT*BW
set time_length 50     ;# Duration
set time_startphase "" ;# default time_length/3
set time_slice 0.05
set pareto_shape 1.2
# (ours)
set clients 200
set access_lat_min 20  ;# ms
set access_lat_max 40  ;# ms
set access_lats {}
set agents fresh       ;# fresh | pool
set flows_file ""
set seed 1
set tcp_vars {}

foreach {name value} $argv { set $name $value }
if {$time_startphase eq ""} { set time_startphase [expr {$time_length / 3.0}] }
expr {srand($seed)}

set bneck_bw_n [expr {$bw * 8.0 * 1000}]
set access_bw_n [expr {$bneck_bw_n * 100}]
set flows_aia [expr {1.0 / ($load * $bw * 1000.0 / $flows_data_kb)}]

Agent/TCP set window_ 10000  ;# max_receiver_window
Agent/TCP set packetSize_ 960 ;# packet_len
foreach {name value} $tcp_vars { Agent/TCP set $name $value }
Queue set limit_ 32000
$defaultRNG seed $seed

remove-all-packet-headers
add-packet-header Pushback NV
add-packet-header IP TCP Flags

set ns [new Simulator]
set n_server [$ns node]
set n_router [$ns node]
$ns duplex-link $n_server $n_router ${bneck_bw_n}kb 20ms DropTail
$ns queue-limit $n_router $n_server $bneck_buffer
set qmon [$ns monitor-queue $n_router $n_server ""]
for {set i 0} {$i < $clients} {incr i} {
    set n_client($i) [$ns node]
    if {[llength $access_lats]} {
        set lat [lindex $access_lats $i]
    } else {
        set lat [expr {rand() * ($access_lat_max - $access_lat_min) + $access_lat_min}]
    }
    $ns duplex-link $n_router $n_client($i) ${access_bw_n}kb ${lat}ms DropTail
    set pool($i) {}
}

# --- Flows
array set active {}  ;# agent -> client, for every flow started and not finished
set started 0
set finished 0

proc start_flow {client npkts} {
    global ns n_client n_server pool active started
    if {[llength $pool($client)]} {
        lassign [lindex $pool($client) end] tcp sink
        set pool($client) [lrange $pool($client) 0 end-1]
    } else {
        set tcp [new Agent/TCP/Reno]
        set sink [new Agent/TCPSink]
        $ns attach-agent $n_client($client) $tcp
        $ns attach-agent $n_server $sink
        $ns connect $tcp $sink
        $tcp proc done {} "flow_done $tcp $sink $client"
    }
    set active($tcp) $client
    incr started
    $tcp advanceby $npkts
}

proc flow_done {tcp sink client} {
    global active agents pool finished
    unset active($tcp)
    incr finished
    if {$agents eq "pool"} { lappend pool($client) [list $tcp $sink] }
}

set arrival [new RandomVariable/Exponential]
$arrival set avg_ $flows_aia
set length [new RandomVariable/Pareto]
$length set avg_ $flows_data_kb
$length set shape_ $pareto_shape
foreach {v} [list $arrival $length] {
    set rng [new RNG]
    $rng seed [expr {$seed * 7919 + [incr rng_count]}]
    $v use-rng $rng
}

proc next_arrival {} {
    global ns arrival length clients time_length
    start_flow [expr {int(rand() * $clients)}] [expr {int([$length value]) + 1}]
    set t [expr {[$ns now] + [$arrival value]}]
    if {$t < $time_length} { $ns at $t next_arrival }
}

if {$flows_file ne ""} {
    set f [open $flows_file]
    while {[gets $f line] >= 0} {
        lassign $line t client npkts
        $ns at $t "start_flow $client $npkts"
    }
    close $f
} else {
    $ns at [$arrival value] next_arrival
}

# --- Measurement
set last [list 0 0 0 0]
set totals [list 0 0 0 0]
proc slice {} {
    global ns qmon active time_slice time_startphase last totals
    set now [$ns now]
    set n 0
    set ca 0
    foreach tcp [array names active] {
        if {[$tcp set ack_] >= 0} {
            incr n
            if {[$tcp set cwnd_] >= [$tcp set ssthresh_]} { incr ca }
        }
    }
    # bdepartures_ is a C int: its step, taken modulo 2^32, survives a wrap
    set counts [list [$qmon set pdepartures_] [$qmon set pdrops_] [$qmon set parrivals_] [$qmon set bdepartures_]]
    set steps [lmap c $counts l $last {expr {($c - $l) % 4294967296}}]
    lassign $steps dep drops arr
    set last $counts
    if {$now > $time_startphase + 1e-9} {
        set totals [lmap t $totals d $steps {expr {$t + $d}}]
    }
    puts [format "slice %.3f active %d ca %d queue %d departures %d drops %d arrivals %d" \
        $now $n $ca [$qmon set pkts_] $dep $drops $arr]
    $ns at [expr {$now + $time_slice}] slice
}

proc finish {} {
    global totals bneck_bw_n time_length time_startphase started finished
    lassign $totals dep drops arr bytes
    set capacity [expr {$bneck_bw_n * 1000.0 / 8.0 * ($time_length - $time_startphase)}]
    puts [format "summary util %.6f loss %.6f flows %d finished %d" \
        [expr {$bytes / $capacity}] [expr {$arr > 0 ? double($drops) / $arr : 0.0}] $started $finished]
    exit 0
}

$ns at $time_slice slice
$ns at [expr {$time_length + 1e-6}] finish
$ns run
