"""A WebRTC peer made with aiortc (its own ICE, DTLS, SCTP and DCEP) for the data-channel
interoperability test.

`aiortc_peer.py answer`: reads the offer as one JSON line ({"sdp": ...}) on stdin and writes the
answer the same way on stdout. `aiortc_peer.py offer`: writes an offer, reads the answer. Then:
echoes each message on the channels Parley opens (text as "echo " + text, binary reversed),
opens its own unordered channel "from-aiortc" (protocol "p", at most 2 retransmissions) and
sends "hello from aiortc" on it. Ends when stdin closes. Host candidates on 127.0.0.1 only.
"""

import asyncio
import json
import sys

import aioice.ice

aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]

from aiortc import RTCPeerConnection, RTCSessionDescription  # noqa: E402


async def main(role: str) -> None:
    loop = asyncio.get_running_loop()
    pc = RTCPeerConnection()

    @pc.on("datachannel")
    def on_datachannel(channel):
        @channel.on("message")
        def on_message(message):
            if isinstance(message, str):
                channel.send("echo " + message)
            else:
                channel.send(bytes(reversed(message)))

    def own_channel():
        own = pc.createDataChannel("from-aiortc", ordered=False, maxRetransmits=2, protocol="p")

        @own.on("open")
        def on_open():
            own.send("hello from aiortc")

    async def read_description(kind: str) -> RTCSessionDescription:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        return RTCSessionDescription(sdp=json.loads(line)["sdp"], type=kind)

    if role == "offer":
        own_channel()
        await pc.setLocalDescription(await pc.createOffer())
        print(json.dumps({"sdp": pc.localDescription.sdp}), flush=True)
        await pc.setRemoteDescription(await read_description("answer"))
    else:
        await pc.setRemoteDescription(await read_description("offer"))
        await pc.setLocalDescription(await pc.createAnswer())
        print(json.dumps({"sdp": pc.localDescription.sdp}), flush=True)
        own_channel()

    await loop.run_in_executor(None, sys.stdin.read)
    await pc.close()


asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "answer"))
