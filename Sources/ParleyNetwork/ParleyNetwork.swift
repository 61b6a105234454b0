// ParleyNetwork: where RTP and RTCP datagrams go between a sender and a receiver.
//
//   PacketTransport / WaitablePacketTransport
//                      the seam every pipeline sends and receives through (ParleyCall's
//                      pipelines and session, ParleySRTP's SRTPTransport, ParleySimulation's
//                      SimulatedLink)
//   UDPTransport       RTP/RTCP over a UDP socket, RTCP optionally to its own port
//
// Pure Swift over the C library's sockets (Glibc): no codec, device or file library.
@_exported import ParleyCore
