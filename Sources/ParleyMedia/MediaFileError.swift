// Pure Swift (no C imports): compiled standalone by the fuzz targets in Fuzz/ (with
// ParleyCore's Errno.swift).
#if canImport(ParleyCore)
import ParleyCore
#endif

/// Why a media file could not be read or written. Every case names the file (its path, or a
/// caller-given name for in-memory bytes) and, where it applies, the byte offset of the problem.
///
/// Readers never crash on bad input: malformed, truncated or unsupported files end up here.
public enum MediaFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ended early: at byte `offset`, `expected` bytes were needed and only `got`
    /// were there. For sample data, `expected`/`got` count the data bytes the header announced
    /// and the ones actually present (so a caller can say how much of the file was read).
    case truncated(path: String, offset: Int, expected: Int, got: Int)
    /// The file is valid but uses something this reader does not handle; `what` names it
    /// (e.g. "WAV format tag 0x0055 (MPEG Layer 3)", "Y4M colourspace C444").
    case unsupported(path: String, what: String)
    /// The bytes break the format's rules at byte `offset`.
    case corrupt(path: String, reason: String, offset: Int)
    /// The path is not a regular file; `kind` says what it is ("a directory", ...).
    case notARegularFile(path: String, kind: String)
    /// The file has zero bytes.
    case empty(path: String)
    /// A system call failed: `operation` (e.g. "open"), its `Errno` and that errno's message.
    case io(path: String, operation: String, errno: Errno, message: String)
    /// Float samples that are NaN or infinite: `count` of them, the first at sample frame
    /// `frame` (counted from the start of the stream).
    case nonFiniteSamples(path: String, frame: Int, count: Int)
    /// A decoding library (libsndfile) refused the file; `message` is the library's own text.
    case library(path: String, message: String)
    /// The caller used the API wrongly with this file (e.g. a frame of the wrong size).
    case invalidArgument(path: String, reason: String)

    public var description: String {
        switch self {
        case let .truncated(path, offset, expected, got):
            return "\(path): truncated at byte \(offset): expected \(expected) bytes, got \(got)"
        case let .unsupported(path, what):
            return "\(path): unsupported: \(what)"
        case let .corrupt(path, reason, offset):
            return "\(path): corrupt at byte \(offset): \(reason)"
        case let .notARegularFile(path, kind):
            return "\(path): not a regular file (\(kind))"
        case let .empty(path):
            return "\(path): empty file (0 bytes)"
        case let .io(path, operation, errno, message):
            return "\(path): \(operation) failed: \(message) (errno \(errno.rawValue))"
        case let .nonFiniteSamples(path, frame, count):
            return "\(path): \(count) NaN/infinite sample(s), first at frame \(frame)"
        case let .library(path, message):
            return "\(path): \(message)"
        case let .invalidArgument(path, reason):
            return "\(path): \(reason)"
        }
    }
}
