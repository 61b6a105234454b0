// Big-endian loads and stores over raw buffers. Callers check bounds first; these are the
// only places that touch bytes by offset, so the parsers read like the RFC diagrams.

@inline(__always) @usableFromInline
func load8(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt8 { b[i] }

@inline(__always) @usableFromInline
func load16(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt16 {
    UInt16(b[i]) << 8 | UInt16(b[i + 1])
}

@inline(__always) @usableFromInline
func load24(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 {
    UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2])
}

@inline(__always) @usableFromInline
func load32(_ b: UnsafeRawBufferPointer, _ i: Int) -> UInt32 {
    UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
}

@inline(__always) @usableFromInline
func store8(_ b: UnsafeMutableRawBufferPointer, _ i: Int, _ v: UInt8) { b[i] = v }

@inline(__always) @usableFromInline
func store16(_ b: UnsafeMutableRawBufferPointer, _ i: Int, _ v: UInt16) {
    b[i] = UInt8(truncatingIfNeeded: v >> 8); b[i + 1] = UInt8(truncatingIfNeeded: v)
}

@inline(__always) @usableFromInline
func store24(_ b: UnsafeMutableRawBufferPointer, _ i: Int, _ v: UInt32) {
    b[i] = UInt8(truncatingIfNeeded: v >> 16); b[i + 1] = UInt8(truncatingIfNeeded: v >> 8)
    b[i + 2] = UInt8(truncatingIfNeeded: v)
}

@inline(__always) @usableFromInline
func store32(_ b: UnsafeMutableRawBufferPointer, _ i: Int, _ v: UInt32) {
    b[i] = UInt8(truncatingIfNeeded: v >> 24); b[i + 1] = UInt8(truncatingIfNeeded: v >> 16)
    b[i + 2] = UInt8(truncatingIfNeeded: v >> 8); b[i + 3] = UInt8(truncatingIfNeeded: v)
}
