#
# appenzeller.tcl: seed 003's long-flow experiments (Figs 3.4, 5.1, 5.2) in ns-2 2.35,
# in the style of Appenzeller's own script, "TcpSim" (thesis Appendix A.4; digest 003
# section 3). Parameters are the defaults below; any of them can be given on the
# command line as name-value pairs:
#
#     ns appenzeller.tcl long_n 20 bw 2.5 bneck_buffer 50 access_lat_min 32 access_lat_max 58
#
# It prints one line on stdout:
#     util U goodput G loss L timeouts T flows N
# U: bits leaving the bottleneck over C x the measurement window; G: payload the
# receivers have in order (the senders' cumulative ACKs) over C x the window; L: drops
# over arrivals at the bottleneck; T: timeouts per flow in the window.
#
# From the thesis (Appendix A.4 and the text of chapter 5):
#   - the header's names, units and defaults: bw in MB/s (19.375 = OC3), bneck_buffer,
#     long_n, time_length, bneck_lat 20 ms, DropTail, access links at 100 x the
#     bottleneck rate, access_lat_min/max, max_receiver_window 10000, packet_len 960
#     (payload: ns-2 adds the 40-byte TCP/IP header, so packets are 1000 B),
#     time_startphase = time_length / 3 (not counted);
#   - the packet headers it keeps (remove-all-packet-headers; Pushback, NV, IP, TCP,
#     Flags);
#   - the topology: a server, a router, a duplex bottleneck link server-router with the
#     buffer under study router -> server; per client a duplex access link to the router
#     with a 32000-packet queue client -> router;
#   - TCP Reno, ns-2's one-way agent, with a TCPSink; long flows send forever (FTP).
#
# Our choices (the rest of the script is not in the thesis):
#   - ns-2's static routing, not the thesis's nix routing (memory only: the paths of a
#     dumbbell are the same); nix routing in ns-2 2.35 (Debian) fails on this topology
#     ("Nix 4294967295 out of range") and the run ends without sending;
#   - the access latency of each client is uniform in [access_lat_min, access_lat_max)
#     ms, not truncated to whole ms (thesis: int(rand()*(max-min))+min, which gives a
#     standard deviation of 6.5%, below the 10% its chapter 5 asks for), and Tcl's rand()
#     is seeded (seed; the thesis left it unseeded);
#   - long flows start uniformly in [0, start_window) s (the thesis: "at different times
#     during an initialization phase");
#   - show_vars prints the named variables of a Reno agent as the script sets it up;
#   - access_lats and starts, when given, replace the draws: a driver can run the very
#     delays and start times of another simulator's run;
#   - the TCP agents keep ns-2 2.35's defaults but for window_ and packetSize_, set to
#     the header's max_receiver_window and packet_len; tcp_vars (a list of name-value pairs) sets more Agent/TCP class
#     variables, so that a driver can give ns-2 the TCP of another model;
#   - every queue but the bottleneck's is 32000 packets (the thesis sets only client ->
#     router), so that only the bottleneck drops: the ACK path never does. As in the
#     thesis, the bottleneck is "queue-limit bneck_buffer": ns-2's DropTail then holds
#     bneck_buffer - 1 waiting packets (it drops when length + 1 >= limit_);
#   - utilization, goodput, loss and timeouts are read from a queue monitor on the
#     bottleneck and from the agents at time_startphase and at time_length.
#

# Defaults - May change for each experiment (thesis)
set bw 19.375         ;# OC3 speed, 155 Mb/s (MBytes/s)
set bneck_buffer 1650 ;# Buffer of RTT*BW
set long_n 0          ;# no of long (size infinity) flows
set time_length 50    ;# Duration
# (ours)
set time_startphase "" ;# default time_length/3, as the thesis
set start_window 10.0 ;# long flows start in [0, start_window) s
set access_lat_min 20 ;# ms
set access_lat_max 30 ;# ms
set seed 1
set tcp_vars {}       ;# more Agent/TCP variables, name-value pairs
set access_lats {}    ;# each client's access latency (ms), in place of drawing it
set starts {}         ;# each flow's start (s), in place of drawing it
set show_vars {}      ;# print these variables of a Reno agent as set up, and stop

foreach {name value} $argv { set $name $value }
if {$time_startphase eq ""} { set time_startphase [expr {$time_length / 3.0}] }
expr {srand($seed)}

# --- Bottleneck Link Parameters (thesis)
set bneck_bw_mb $bw      ;# MBytes / second
set bneck_lat  20      ;# milliseconds
set bneck_drop "DropTail"
set bneck_bw_n [expr $bneck_bw_mb*8.0*1000]
set bneck_bw   ${bneck_bw_n}kb

# --- Access Link Parameters (thesis)
set access_bw_n [expr $bneck_bw_n*100]
set access_bw   ${access_bw_n}kb

# --- Packet parameters (thesis)
set max_receiver_window 10000 ;# Maximum advertised receiver Window
set packet_len          960 ;# Length of packets

Agent/TCP set window_ $max_receiver_window
Agent/TCP set packetSize_ $packet_len
foreach {name value} $tcp_vars { Agent/TCP set $name $value }
# only the bottleneck drops (ours: the thesis sets the access queues alone)
Queue set limit_ 32000
$defaultRNG seed $seed

remove-all-packet-headers ;# removes all except common
add-packet-header Pushback NV
add-packet-header IP TCP Flags

set ns [new Simulator]
if {[llength $show_vars]} {
    set probe [new Agent/TCP/Reno]
    foreach v $show_vars { puts "$v [$probe set $v]" }
    exit 0
}

# --- Create Server, Router and bottleneck link (thesis)
set n_server [$ns node]
set n_router [$ns node]
$ns duplex-link $n_server $n_router $bneck_bw ${bneck_lat}ms $bneck_drop
$ns queue-limit $n_router $n_server $bneck_buffer
set qmon [$ns monitor-queue $n_router $n_server ""]

for {set i 0} {$i < $long_n} {incr i} {
    set n_client($i) [$ns node]
    if {[llength $access_lats]} {
        set lat_access [lindex $access_lats $i]
    } else {
        set lat_access [expr {rand() * ($access_lat_max - $access_lat_min) + $access_lat_min}]
    }
    $ns duplex-link $n_router $n_client($i) $access_bw ${lat_access}ms $bneck_drop
    $ns queue-limit $n_client($i) $n_router 32000
}

# --- Long flows (ours: Reno senders, one TCPSink each on the server)
for {set i 0} {$i < $long_n} {incr i} {
    set tcp($i) [new Agent/TCP/Reno]
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $n_client($i) $tcp($i)
    $ns attach-agent $n_server $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [$tcp($i) attach-app FTP]
    set start [expr {[llength $starts] ? [lindex $starts $i] : rand() * $start_window}]
    $ns at $start "$ftp($i) start"
}

# --- Measurement (ours). ns-2 counts bytes in a C int: summed a second at a time,
# each step taken modulo 2^32, so that wraps do not matter.
set bytes 0
set last_bdep 0
proc add_bytes {} {
    global qmon bytes last_bdep
    set now [$qmon set bdepartures_]
    set bytes [expr {$bytes + ($now - $last_bdep) % 4294967296}]
    set last_bdep $now
}
proc count_bytes {} {
    global ns
    add_bytes
    $ns at [expr {[$ns now] + 1.0}] count_bytes
}

proc snapshot {} {
    global qmon tcp long_n bytes
    add_bytes
    set acked 0
    set timeouts 0
    for {set i 0} {$i < $long_n} {incr i} {
        # ack_ is -1 before the first ACK
        incr acked [expr {max([$tcp($i) set ack_], -1) + 1}]
        incr timeouts [$tcp($i) set nrexmit_]
    }
    return [list $bytes $acked $timeouts [$qmon set parrivals_] [$qmon set pdrops_]]
}

proc finish {} {
    global start bneck_bw_n time_length time_startphase packet_len long_n
    lassign $start b0 a0 t0 p0 d0
    lassign [snapshot] b1 a1 t1 p1 d1
    set window [expr {$time_length - $time_startphase}]
    set capacity [expr {$bneck_bw_n * 1000.0 * $window}]
    set arrivals [expr {$p1 - $p0}]
    puts [format "util %.6f goodput %.6f loss %.6f timeouts %.4f flows %d" \
        [expr {($b1 - $b0) * 8 / $capacity}] [expr {($a1 - $a0) * $packet_len * 8 / $capacity}] \
        [expr {$arrivals > 0 ? double($d1 - $d0) / $arrivals : 0.0}] \
        [expr {double($t1 - $t0) / max($long_n, 1)}] $long_n]
    exit 0
}

$ns at 1.0 count_bytes
$ns at $time_startphase {set start [snapshot]}
$ns at $time_length finish
$ns run
