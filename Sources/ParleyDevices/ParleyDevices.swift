// ParleyDevices: microphones, speakers and cameras, and test sources that stand in for them.
//
//   ALSACapture / ALSAPlayback   alsa-lib PCMs (any name: default, hw:1,0, plughw:..., or one
//                                from a configuration the caller supplies), xrun counting
//   ALSADevices                  PCM names from snd_device_name_hint
//   V4L2Capture / V4L2Devices    cameras through libv4l2 (converted to I420 by libv4lconvert)
//   ToneSource, SampleProviderSource, Y4MFileSource, PatternSource
//                                paced test sources behind the same protocols as the devices
//   AudioCaptureStream / VideoCaptureStream
//                                a capture thread feeding an AsyncStream with a bounded buffer
//
// Every device call goes through ParleyCore's one system-call layer (valueOrErrno and
// valueOrNegatedErrno in ParleyCore/Syscall.swift), which retries EINTR and turns -1/errno
// (or alsa-lib's negative errno) into an Errno.
@_exported import ParleyCore
