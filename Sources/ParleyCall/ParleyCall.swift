// ParleyCall module. See README.md for the module map.
@_exported import ParleyCore
// The transports added to a call (UDPTransport, any PacketTransport) come with it.
@_exported import ParleyNetwork
