// aqmlab ns-3 peer: n long-lived TCP (NewReno, classic recovery) flows over a
// dumbbell with one DropTail or RED bottleneck. All parameters come from the
// command line; one JSON object is printed on stdout. See bench/ns3/README.md.
//
// Topology (all links point-to-point, full duplex, same rate/delay both ways):
//   s_i --(accessRate, a_i)--> r1 --(bottleneckRate, bottleneckDelay)--> r2
//       --(receiverRate, receiverDelay)--> d_i
//   a_i = accessDelayFirst + (accessDelayLast - accessDelayFirst) * i/(n-1)
//   (by default 1 ms + 49 ms * i/(n-1); receiverRate = accessRate, 1 ms)
// Flow i: BulkSend s_i -> PacketSink d_i, starting at startSpread * i / n.
// With --workload=FILE the flows are instead the file's, one a line
// ("sender start_s bytes": a transfer of that many bytes from s_sender,
// starting then), all to one receiver d_0; --accessDelays=FILE gives each
// sender's access delay (s), one a line, in place of the rule.
//
// Queues: flow control is disabled on every PointToPointNetDevice but the
// bottleneck's with a RED bottleneck, so no NetDeviceQueueInterface is
// aggregated and Ipv4AddressHelper installs no traffic-control queue disc.
// The only queue on each device is the device's DropTailQueue<Packet>:
// bufferPkts packets on r1->r2, largeQueuePkts on all others. With
// --bottleneckQueue=red, r1->r2 instead holds a RedQueueDisc of bufferPkts
// packets in front of a device queue of one packet (the disc then holds
// the backlog), and r2->r1 no disc. The program checks that no other queue
// disc is installed anywhere.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/nix-vector-routing-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

constexpr uint32_t kPppHeader = 2; // PointToPointNetDevice adds a 2-byte PPP header

struct Stats
{
    double warmup = 0;
    // bottleneck r1 -> r2
    uint64_t bnTxIpBytesWin = 0;    // IP bytes whose transmission ended in [warmup, end]
    uint64_t bnTxPktsWin = 0;
    uint64_t bnArrivalsWin = 0; // accepted + dropped at the bottleneck queue, in window
    uint64_t bnDropsWin = 0;
    uint64_t bnArrivalsAll = 0;
    uint64_t bnDropsAll = 0;
    uint64_t qSamples = 0;
    double qSum = 0;
    uint32_t qMax = 0;
    // receivers
    uint64_t dataPktsDelivered = 0; // data segments arriving at d_i (incl. duplicates)
    uint64_t dataPktsSent = 0;      // data segments leaving s_i (incl. retransmissions)
    // TCP events
    uint64_t fastRecoveries = 0;
    uint64_t rtoEvents = 0;
    uint64_t retransmissions = 0;
    uint32_t maxCwndBytes = 0;
    std::vector<uint64_t> rxAtWarmup;
};

Stats g;
Ptr<Queue<Packet>> g_bnQueue;
Ptr<QueueDisc> g_bnQueueDisc; // the RED bottleneck's, if any

bool
InWindow()
{
    return Simulator::Now().GetSeconds() >= g.warmup;
}

void
BnEnqueue(Ptr<const Packet>)
{
    g.bnArrivalsAll++;
    if (InWindow())
    {
        g.bnArrivalsWin++;
    }
}

void
BnDrop(Ptr<const Packet>)
{
    g.bnArrivalsAll++;
    g.bnDropsAll++;
    if (InWindow())
    {
        g.bnArrivalsWin++;
        g.bnDropsWin++;
    }
}

// The same counts from a RED bottleneck's queue disc.
void
BnDiscEnqueue(Ptr<const QueueDiscItem> item)
{
    BnEnqueue(item->GetPacket());
}

void
BnDiscDrop(Ptr<const QueueDiscItem> item)
{
    BnDrop(item->GetPacket());
}

void
BnTxEnd(Ptr<const Packet> p)
{
    if (InWindow())
    {
        g.bnTxIpBytesWin += p->GetSize() - kPppHeader;
        g.bnTxPktsWin++;
    }
}

// A data segment is any packet larger than the biggest pure ACK / SYN
// (2 PPP + 20 IP + 20 TCP + up to 40 option bytes).
constexpr uint32_t kDataThreshold = 100;

void
ReceiverMacRx(Ptr<const Packet> p)
{
    if (p->GetSize() > kDataThreshold)
    {
        g.dataPktsDelivered++;
    }
}

void
SenderMacTx(Ptr<const Packet> p)
{
    if (p->GetSize() > kDataThreshold)
    {
        g.dataPktsSent++;
    }
}

void
SampleQueue(Time interval, Time end)
{
    uint32_t q = g_bnQueue->GetNPackets() + (g_bnQueueDisc ? g_bnQueueDisc->GetNPackets() : 0);
    g.qSum += q;
    g.qSamples++;
    g.qMax = std::max(g.qMax, q);
    if (Simulator::Now() + interval < end)
    {
        Simulator::Schedule(interval, &SampleQueue, interval, end);
    }
}

void
CongStateChange(TcpSocketState::TcpCongState_t oldState, TcpSocketState::TcpCongState_t newState)
{
    if (newState == TcpSocketState::CA_RECOVERY && oldState != TcpSocketState::CA_RECOVERY)
    {
        g.fastRecoveries++;
    }
}

void
CwndChange(uint32_t, uint32_t newCwnd)
{
    g.maxCwndBytes = std::max(g.maxCwndBytes, newCwnd);
}

void
Retransmission(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
               Ptr<const TcpSocketBase>)
{
    g.retransmissions++;
}

// ReTxTimeout always moves to CA_LOSS; a traced value fires only on a change,
// so this counts RTO episodes (a run of backed-off timeouts counts once).
void
CongStateForRto(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t newState)
{
    if (newState == TcpSocketState::CA_LOSS)
    {
        g.rtoEvents++;
    }
}

void
HookSocket(Ptr<BulkSendApplication> app)
{
    Ptr<Socket> s = app->GetSocket();
    if (!s)
    {
        std::cerr << "warning: BulkSend socket not created yet\n";
        return;
    }
    s->TraceConnectWithoutContext("CongState", MakeCallback(&CongStateChange));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&CongStateForRto));
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&CwndChange));
    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&Retransmission));
}

void
SnapshotRx(std::vector<Ptr<PacketSink>>* sinks)
{
    g.rxAtWarmup.resize(sinks->size());
    for (size_t i = 0; i < sinks->size(); i++)
    {
        g.rxAtWarmup[i] = (*sinks)[i]->GetTotalRx();
    }
}

std::string
JsonStr(const std::string& s)
{
    std::string o = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            o += '\\';
        }
        o += c;
    }
    return o + "\"";
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t n = 50;
    std::string bottleneckRate = "20Mbps";
    std::string bottleneckDelay = "20ms";
    std::string accessRate = "100Mbps";
    double accessDelayFirst = 0.001; // s
    double accessDelayLast = 0.050;  // s
    std::string receiverRate = "";   // empty: accessRate
    double receiverDelay = 0.001;    // s
    std::string workloadFile = "";
    std::string accessDelaysFile = "";
    std::string bottleneckQueue = "droptail";
    double redMinTh = 5;     // packets
    double redMaxTh = 15;    // packets
    double redMaxP = 0.02;
    double redQw = 0.002;
    uint32_t redMeanPktSize = 1000; // bytes, for the idle-time decay
    uint32_t bufferPkts = 100;
    uint32_t largeQueuePkts = 100000;
    double startSpread = 2.5;
    double duration = 60.0;
    double warmup = 20.0;
    uint32_t segmentSize = 960;  // payload; + 20 TCP + 20 IP = 1000-byte IP packets
    uint32_t initialCwnd = 2;    // segments
    double minRto = 0.2;         // s
    double clockGranularity = 0.01; // s
    double synTimeout = 1.0;     // s, initial RTO for the SYN (RFC 6298)
    uint32_t sockBuf = 0;        // bytes; 0 = computed, see below
    uint32_t sendSize = 96000;   // bytes per BulkSend write (100 segments)
    bool limitedTransmit = false;
    bool sack = false;
    uint32_t initialSsthresh = 0xffffffffu; // bytes
    std::string recovery = "ns3::TcpClassicRecovery";
    double sampleInterval = 0.01; // s
    std::string caseName = "";
    std::string routing = "static";
    bool weakEs = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("n", "number of flows", n);
    cmd.AddValue("bottleneckRate", "bottleneck rate", bottleneckRate);
    cmd.AddValue("bottleneckDelay", "bottleneck one-way delay", bottleneckDelay);
    cmd.AddValue("accessRate", "access/receiver link rate", accessRate);
    cmd.AddValue("accessDelayFirst", "access delay of flow 0 (s)", accessDelayFirst);
    cmd.AddValue("accessDelayLast", "access delay of flow n-1 (s); the rest evenly between",
                 accessDelayLast);
    cmd.AddValue("receiverRate", "receiver link rate (default accessRate)", receiverRate);
    cmd.AddValue("receiverDelay", "receiver link one-way delay (s)", receiverDelay);
    cmd.AddValue("workload", "file of flows, 'sender start_s bytes' a line, to one receiver",
                 workloadFile);
    cmd.AddValue("accessDelays", "file of the senders' access delays (s), one a line",
                 accessDelaysFile);
    cmd.AddValue("bottleneckQueue", "droptail or red", bottleneckQueue);
    cmd.AddValue("redMinTh", "RED min_th (packets)", redMinTh);
    cmd.AddValue("redMaxTh", "RED max_th (packets)", redMaxTh);
    cmd.AddValue("redMaxP", "RED max_p", redMaxP);
    cmd.AddValue("redQw", "RED w_q", redQw);
    cmd.AddValue("redMeanPktSize", "RED mean packet size (bytes)", redMeanPktSize);
    cmd.AddValue("bufferPkts", "bottleneck limit (packets)", bufferPkts);
    cmd.AddValue("largeQueuePkts", "limit of every other queue (packets)", largeQueuePkts);
    cmd.AddValue("startSpread", "flow i starts at startSpread*i/n (s)", startSpread);
    cmd.AddValue("duration", "simulated time (s)", duration);
    cmd.AddValue("warmup", "start of the measurement window (s)", warmup);
    cmd.AddValue("segmentSize", "TCP payload bytes per segment", segmentSize);
    cmd.AddValue("initialCwnd", "initial cwnd (segments)", initialCwnd);
    cmd.AddValue("minRto", "minimum RTO (s)", minRto);
    cmd.AddValue("clockGranularity", "RTO clock granularity G (s)", clockGranularity);
    cmd.AddValue("synTimeout", "SYN retransmission timeout (s)", synTimeout);
    cmd.AddValue("sockBuf", "TCP send/receive buffer (bytes), 0 = 2*(BDP_max+buffer)", sockBuf);
    cmd.AddValue("sendSize", "BulkSend write size (bytes)", sendSize);
    cmd.AddValue("limitedTransmit", "RFC 3042 limited transmit", limitedTransmit);
    cmd.AddValue("sack", "SACK option (default off, as ns-2 Reno)", sack);
    cmd.AddValue("initialSsthresh", "initial ssthresh (bytes)", initialSsthresh);
    cmd.AddValue("recovery", "ns3::TcpClassicRecovery or ns3::TcpPrrRecovery", recovery);
    cmd.AddValue("sampleInterval", "queue sampling interval (s)", sampleInterval);
    cmd.AddValue("routing", "static (summarized static routes) or nix (nix-vector)", routing);
    cmd.AddValue("weakEs", "ns3::Ipv4::WeakEsModel (true scans every interface per packet)", weakEs);
    cmd.AddValue("caseName", "label copied to the output", caseName);
    cmd.Parse(argc, argv);

    NS_ABORT_MSG_IF(n < 1, "n must be >= 1");
    NS_ABORT_MSG_IF(warmup >= duration, "warmup must be < duration");
    NS_ABORT_MSG_UNLESS(bottleneckQueue == "droptail" || bottleneckQueue == "red",
                        "bottleneckQueue must be droptail or red");
    const bool red = bottleneckQueue == "red";
    g.warmup = warmup;

    DataRate bnRate(bottleneckRate);
    DataRate acRate(accessRate);
    DataRate rcvRate(receiverRate.empty() ? accessRate : receiverRate);
    Time bnDelay(bottleneckDelay);

    std::vector<double> accessDelays(n); // seconds
    for (uint32_t i = 0; i < n; i++)
    {
        double frac = n > 1 ? static_cast<double>(i) / (n - 1) : 0.0;
        accessDelays[i] = accessDelayFirst + (accessDelayLast - accessDelayFirst) * frac;
    }
    if (!accessDelaysFile.empty())
    {
        std::ifstream in(accessDelaysFile);
        NS_ABORT_MSG_UNLESS(in, "cannot read accessDelays " << accessDelaysFile);
        for (uint32_t i = 0; i < n; i++)
        {
            NS_ABORT_MSG_UNLESS(in >> accessDelays[i], "accessDelays: fewer than n lines");
        }
    }

    struct WorkloadFlow
    {
        uint32_t sender;
        double start;
        uint64_t bytes;
    };
    std::vector<WorkloadFlow> workload;
    if (!workloadFile.empty())
    {
        std::ifstream in(workloadFile);
        NS_ABORT_MSG_UNLESS(in, "cannot read workload " << workloadFile);
        WorkloadFlow f;
        while (in >> f.sender >> f.start >> f.bytes)
        {
            NS_ABORT_MSG_UNLESS(f.sender < n, "workload: sender " << f.sender << " >= n");
            workload.push_back(f);
        }
        NS_ABORT_MSG_IF(workload.empty(), "workload: no flows in " << workloadFile);
    }
    // One receiver for a workload's flows; else one per sender.
    const uint32_t nRcv = workload.empty() ? n : 1;

    // Largest two-way propagation delay, and a buffer big enough never to
    // limit a window: twice (largest BDP + bottleneck buffer), at least 1 MB.
    double maxRtt = 2 * (*std::max_element(accessDelays.begin(), accessDelays.end()) +
                         bnDelay.GetSeconds() + receiverDelay);
    if (sockBuf == 0)
    {
        double bdp = bnRate.GetBitRate() * maxRtt / 8.0;
        double want = 2.0 * (bdp + bufferPkts * (segmentSize + 40.0));
        want = std::max(want, 1.0e6);
        want = std::min(want, 1.0e9); // window scaling allows up to 2^30
        sockBuf = static_cast<uint32_t>(std::ceil(want / segmentSize) * segmentSize);
    }

    // ---- TCP defaults -----------------------------------------------------
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TypeId::LookupByName(recovery)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
                       TimeValue(Seconds(clockGranularity)));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(3));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold",
                       UintegerValue(initialSsthresh));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sockBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(sockBuf));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(synTimeout)));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(1000000));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000000));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));

    // ---- nodes and links --------------------------------------------------
    NodeContainer senders;
    senders.Create(n);
    NodeContainer receivers;
    receivers.Create(nRcv);
    NodeContainer routers;
    routers.Create(2);
    Ptr<Node> r1 = routers.Get(0);
    Ptr<Node> r2 = routers.Get(1);

    NS_ABORT_MSG_UNLESS(routing == "static" || routing == "nix", "routing must be static or nix");
    // No packet is addressed to a router, so the strong end-system model only
    // saves Ipv4L3Protocol::IsDestinationAddress a scan over all n+1 router
    // interfaces per forwarded packet; it changes no forwarding decision.
    Config::SetDefault("ns3::Ipv4::StrongEndSystemModel", BooleanValue(!weakEs));
    InternetStackHelper stack;
    Ipv4StaticRoutingHelper staticRouting;
    Ipv4NixVectorHelper nixRouting;
    if (routing == "nix")
    {
        stack.SetRoutingHelper(nixRouting);
    }
    else
    {
        stack.SetRoutingHelper(staticRouting);
    }
    stack.InstallAll();

    std::string largeQ = std::to_string(largeQueuePkts) + "p";
    PointToPointHelper p2p;
    p2p.DisableFlowControl();
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(largeQ)));

    // Bottleneck r1 <-> r2. A RED disc needs the device's flow control,
    // which tells the disc when the device can take the next packet.
    PointToPointHelper p2pBn;
    if (!red)
    {
        p2pBn.DisableFlowControl();
    }
    p2pBn.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(largeQ)));
    p2pBn.SetDeviceAttribute("DataRate", DataRateValue(bnRate));
    p2pBn.SetChannelAttribute("Delay", TimeValue(bnDelay));
    NetDeviceContainer bnDevs = p2pBn.Install(r1, r2);
    Ptr<PointToPointNetDevice> bnDev = DynamicCast<PointToPointNetDevice>(bnDevs.Get(0));
    g_bnQueue = bnDev->GetQueue();
    g_bnQueue->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, red ? 1 : bufferPkts));
    TrafficControlHelper redHelper;
    if (red)
    {
        // Installed before the addresses, so that Ipv4AddressHelper adds no
        // default disc on r1's side.
        redHelper.SetRootQueueDisc("ns3::RedQueueDisc",
                                   "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, bufferPkts)),
                                   "MinTh", DoubleValue(redMinTh),
                                   "MaxTh", DoubleValue(redMaxTh),
                                   "LInterm", DoubleValue(1.0 / redMaxP),
                                   "QW", DoubleValue(redQw),
                                   "Gentle", BooleanValue(false),
                                   "MeanPktSize", UintegerValue(redMeanPktSize),
                                   "LinkBandwidth", DataRateValue(bnRate),
                                   "LinkDelay", TimeValue(bnDelay));
        g_bnQueueDisc = redHelper.Install(bnDevs.Get(0)).Get(0);
    }

    Ipv4AddressHelper addr;
    addr.SetBase("13.0.0.0", "255.255.255.252");
    Ipv4InterfaceContainer bnIf = addr.Assign(bnDevs);
    if (red)
    {
        // r2 -> r1 carries only ACKs: no disc, as with DropTail.
        redHelper.Uninstall(bnDevs.Get(1));
    }

    // Access links s_i <-> r1 (11.0.0.0/8) and receiver links r2 <-> d_i (12.0.0.0/8)
    std::vector<NetDeviceContainer> accDevs(n);
    std::vector<NetDeviceContainer> rcvDevs(nRcv);
    std::vector<Ipv4InterfaceContainer> accIf(n);
    std::vector<Ipv4InterfaceContainer> rcvIf(nRcv);
    Ipv4AddressHelper accAddr("11.0.0.0", "255.255.255.252");
    Ipv4AddressHelper rcvAddr("12.0.0.0", "255.255.255.252");
    p2p.SetDeviceAttribute("DataRate", DataRateValue(acRate));
    for (uint32_t i = 0; i < n; i++)
    {
        p2p.SetChannelAttribute("Delay", TimeValue(Seconds(accessDelays[i])));
        accDevs[i] = p2p.Install(senders.Get(i), r1);
        accIf[i] = accAddr.Assign(accDevs[i]);
        accAddr.NewNetwork();
    }
    p2p.SetDeviceAttribute("DataRate", DataRateValue(rcvRate));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(receiverDelay)));
    for (uint32_t i = 0; i < nRcv; i++)
    {
        rcvDevs[i] = p2p.Install(r2, receivers.Get(i));
        rcvIf[i] = rcvAddr.Assign(rcvDevs[i]);
        rcvAddr.NewNetwork();
    }

    // No traffic-control queue discs anywhere but a RED bottleneck's: the
    // device queue is the only other queue.
    uint32_t queueDiscs = 0;
    for (auto it = NodeList::Begin(); it != NodeList::End(); ++it)
    {
        Ptr<Node> node = *it;
        Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; d < node->GetNDevices(); d++)
        {
            if (tc && tc->GetRootQueueDiscOnDevice(node->GetDevice(d)))
            {
                queueDiscs++;
            }
        }
    }
    NS_ABORT_MSG_IF(queueDiscs != (red ? 1 : 0), "unexpected traffic-control queue discs installed");

    // ---- static routes ----------------------------------------------------
    if (routing == "static")
    {
    Ipv4Address r1Bn = bnIf.GetAddress(0);
    Ipv4Address r2Bn = bnIf.GetAddress(1);
    uint32_t r1BnIf = r1->GetObject<Ipv4>()->GetInterfaceForDevice(bnDevs.Get(0));
    uint32_t r2BnIf = r2->GetObject<Ipv4>()->GetInterfaceForDevice(bnDevs.Get(1));
    staticRouting.GetStaticRouting(r1->GetObject<Ipv4>())
        ->AddNetworkRouteTo("12.0.0.0", "255.0.0.0", r2Bn, r1BnIf);
    staticRouting.GetStaticRouting(r2->GetObject<Ipv4>())
        ->AddNetworkRouteTo("11.0.0.0", "255.0.0.0", r1Bn, r2BnIf);
    for (uint32_t i = 0; i < n; i++)
    {
        Ptr<Ipv4> si = senders.Get(i)->GetObject<Ipv4>();
        staticRouting.GetStaticRouting(si)->SetDefaultRoute(accIf[i].GetAddress(1),
                                                            si->GetInterfaceForDevice(
                                                                accDevs[i].Get(0)));
    }
    for (uint32_t i = 0; i < nRcv; i++)
    {
        Ptr<Ipv4> di = receivers.Get(i)->GetObject<Ipv4>();
        staticRouting.GetStaticRouting(di)->SetDefaultRoute(rcvIf[i].GetAddress(0),
                                                            di->GetInterfaceForDevice(
                                                                rcvDevs[i].Get(1)));
    }
    }

    // ---- applications -----------------------------------------------------
    const uint16_t port = 9;
    std::vector<Ptr<PacketSink>> sinks(nRcv);
    for (uint32_t i = 0; i < nRcv; i++)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(receivers.Get(i));
        sa.Start(Seconds(0));
        sinks[i] = DynamicCast<PacketSink>(sa.Get(0));
    }
    // A transfer of `bytes` (0: without end) from sender s to receiver r.
    auto addFlow = [&](uint32_t s, uint32_t r, Time start, uint64_t bytes) {
        BulkSendHelper src("ns3::TcpSocketFactory",
                           InetSocketAddress(rcvIf[r].GetAddress(1), port));
        src.SetAttribute("MaxBytes", UintegerValue(bytes));
        src.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer ca = src.Install(senders.Get(s));
        ca.Start(start);
        // The socket exists once StartApplication has run.
        Simulator::Schedule(start + NanoSeconds(1), &HookSocket,
                            DynamicCast<BulkSendApplication>(ca.Get(0)));
    };
    if (workload.empty())
    {
        for (uint32_t i = 0; i < n; i++)
        {
            addFlow(i, i, Seconds(startSpread * i / n), 0);
        }
    }
    for (const auto& f : workload)
    {
        addFlow(f.sender, 0, Seconds(f.start), f.bytes);
    }

    // ---- instrumentation --------------------------------------------------
    if (red)
    {
        g_bnQueueDisc->TraceConnectWithoutContext("Enqueue", MakeCallback(&BnDiscEnqueue));
        g_bnQueueDisc->TraceConnectWithoutContext("Drop", MakeCallback(&BnDiscDrop));
    }
    else
    {
        g_bnQueue->TraceConnectWithoutContext("Enqueue", MakeCallback(&BnEnqueue));
        g_bnQueue->TraceConnectWithoutContext("Drop", MakeCallback(&BnDrop));
    }
    bnDev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&BnTxEnd));
    for (uint32_t i = 0; i < nRcv; i++)
    {
        rcvDevs[i].Get(1)->TraceConnectWithoutContext("MacRx", MakeCallback(&ReceiverMacRx));
    }
    for (uint32_t i = 0; i < n; i++)
    {
        accDevs[i].Get(0)->TraceConnectWithoutContext("MacTx", MakeCallback(&SenderMacTx));
    }
    Time end = Seconds(duration);
    Simulator::Schedule(Seconds(warmup), &SampleQueue, Seconds(sampleInterval), end);
    Simulator::Schedule(Seconds(warmup), &SnapshotRx, &sinks);
    Simulator::Stop(end);

    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(t1 - t0).count();

    // ---- results ----------------------------------------------------------
    double win = duration - warmup;
    std::vector<double> goodput(nRcv);
    double sum = 0;
    double sumSq = 0;
    uint64_t appBytesTotal = 0;
    for (uint32_t i = 0; i < nRcv; i++)
    {
        uint64_t rx = sinks[i]->GetTotalRx();
        appBytesTotal += rx;
        uint64_t base = i < g.rxAtWarmup.size() ? g.rxAtWarmup[i] : 0;
        goodput[i] = (rx - base) * 8.0 / win;
        sum += goodput[i];
        sumSq += goodput[i] * goodput[i];
    }
    double jain = sumSq > 0 ? sum * sum / (nRcv * sumSq) : 0.0;
    double util = g.bnTxIpBytesWin * 8.0 / (bnRate.GetBitRate() * win);
    double utilWire =
        (g.bnTxIpBytesWin + kPppHeader * g.bnTxPktsWin) * 8.0 / (bnRate.GetBitRate() * win);
    double loss = g.bnArrivalsWin ? static_cast<double>(g.bnDropsWin) / g.bnArrivalsWin : 0.0;
    double meanQ = g.qSamples ? g.qSum / g.qSamples : 0.0;

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double peakRssMb = ru.ru_maxrss / 1024.0; // ru_maxrss is in KiB on Linux

    std::ostringstream o;
    o << std::setprecision(10);
    o << "{";
    o << "\"simulator\":\"ns-3.44 (PyPI wheel ns3 3.44.post0)\",";
    o << "\"case\":" << JsonStr(caseName) << ",";
    o << "\"params\":{";
    o << "\"n\":" << n << ",\"bottleneckRate\":" << JsonStr(bottleneckRate)
      << ",\"bottleneckRate_bps\":" << bnRate.GetBitRate()
      << ",\"bottleneckDelay\":" << JsonStr(bottleneckDelay)
      << ",\"accessRate\":" << JsonStr(accessRate) << ",\"accessRate_bps\":" << acRate.GetBitRate()
      << ",\"accessDelay_s\":{\"first\":" << accessDelays[0] << ",\"last\":" << accessDelays[n - 1]
      << ",\"rule\":"
      << (accessDelaysFile.empty() ? "\"first + (last - first)*i/(n-1)\""
                                   : JsonStr("from " + accessDelaysFile))
      << "}"
      << ",\"workload\":"
      << (workload.empty() ? "null"
                           : "{\"file\":" + JsonStr(workloadFile) +
                                 ",\"flows\":" + std::to_string(workload.size()) +
                                 ",\"receivers\":1}")
      << ",\"receiverRate_bps\":" << rcvRate.GetBitRate()
      << ",\"receiverLinkDelay_s\":" << receiverDelay
      << ",\"bottleneckQueue\":" << JsonStr(bottleneckQueue);
    if (red)
    {
        o << ",\"red\":{\"minTh_pkts\":" << redMinTh << ",\"maxTh_pkts\":" << redMaxTh
          << ",\"maxP\":" << redMaxP << ",\"qW\":" << redQw
          << ",\"meanPktSize_bytes\":" << redMeanPktSize << ",\"gentle\":false}";
    }
    o
      << ",\"bufferPkts\":" << bufferPkts << ",\"largeQueuePkts\":" << largeQueuePkts
      << ",\"startSpread_s\":" << startSpread << ",\"duration_s\":" << duration
      << ",\"warmup_s\":" << warmup << ",\"segmentSize_bytes\":" << segmentSize
      << ",\"ipPacketSize_bytes\":" << segmentSize + 40
      << ",\"wirePacketSize_bytes\":" << segmentSize + 40 + kPppHeader
      << ",\"pppHeader_bytes\":" << kPppHeader << ",\"initialCwnd_segments\":" << initialCwnd
      << ",\"initialSsthresh_bytes\":" << initialSsthresh << ",\"sack\":" << (sack ? "true" : "false")
      << ",\"recovery\":" << JsonStr(recovery)
      << ",\"minRto_s\":" << minRto << ",\"clockGranularity_s\":" << clockGranularity
      << ",\"synTimeout_s\":" << synTimeout << ",\"sockBuf_bytes\":" << sockBuf
      << ",\"sendSize_bytes\":" << sendSize << ",\"limitedTransmit\":"
      << (limitedTransmit ? "true" : "false") << ",\"sampleInterval_s\":" << sampleInterval
      << ",\"tcp\":\"TcpNewReno, timestamps off, window scaling on, DelAckCount 1, SYN handshake\""
      << ",\"routing\":" << JsonStr(routing) << ",\"weakEsModel\":" << (weakEs ? "true" : "false")
      << ",\"queues\":"
      << (red ? "\"RedQueueDisc on r1->r2 over a 1-packet device queue; elsewhere device "
                "DropTailQueue only (flow control disabled, no queue discs)\""
              : "\"device DropTailQueue only (flow control disabled, no queue discs)\"");
    o << "},";
    o << "\"results\":{";
    o << "\"window_s\":[" << warmup << "," << duration << "]";
    o << ",\"bottleneck_utilization\":" << util;
    o << ",\"bottleneck_utilization_wire\":" << utilWire;
    o << ",\"bottleneck_utilization_max_ip\":"
      << static_cast<double>(segmentSize + 40) / (segmentSize + 40 + kPppHeader);
    o << ",\"bottleneck_loss_rate\":" << loss;
    o << ",\"bottleneck_arrivals_window\":" << g.bnArrivalsWin;
    o << ",\"bottleneck_drops_window\":" << g.bnDropsWin;
    o << ",\"bottleneck_arrivals_total\":" << g.bnArrivalsAll;
    o << ",\"bottleneck_drops_total\":" << g.bnDropsAll;
    o << ",\"bottleneck_tx_packets_window\":" << g.bnTxPktsWin;
    o << ",\"mean_queue_pkts\":" << meanQ;
    o << ",\"max_queue_pkts_sampled\":" << g.qMax;
    o << ",\"queue_samples\":" << g.qSamples;
    o << ",\"goodput_bps\":[";
    for (uint32_t i = 0; i < nRcv; i++)
    {
        o << (i ? "," : "") << goodput[i];
    }
    o << "]";
    o << ",\"goodput_total_bps\":" << sum;
    o << ",\"jain_fairness\":" << jain;
    o << ",\"data_packets_delivered\":" << g.dataPktsDelivered;
    o << ",\"data_packets_sent\":" << g.dataPktsSent;
    o << ",\"app_bytes_delivered_total\":" << appBytesTotal;
    o << ",\"unique_segments_delivered\":" << appBytesTotal / segmentSize;
    o << ",\"retransmissions\":" << g.retransmissions;
    o << ",\"fast_recoveries\":" << g.fastRecoveries;
    o << ",\"rto_episodes\":" << g.rtoEvents;
    o << ",\"max_cwnd_bytes\":" << g.maxCwndBytes;
    o << ",\"wall_time_run_s\":" << wall;
    o << ",\"data_packets_delivered_per_wall_s\":"
      << (wall > 0 ? g.dataPktsDelivered / wall : 0.0);
    o << ",\"peak_rss_mb\":" << peakRssMb;
    o << "}}";
    std::cout << o.str() << std::endl;

    Simulator::Destroy();
    return 0;
}
