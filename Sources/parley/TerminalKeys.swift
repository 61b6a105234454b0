// Single key presses from the terminal while a live grid is shown.

import Foundation
import ParleyCore
#if canImport(Glibc)
import Glibc
#endif

/// Reads single key presses from standard input when it is a terminal: the terminal is put in
/// non-canonical mode without echo (signals such as Ctrl-C still work), and a thread runs the
/// action of each known key (case-insensitive) as it is pressed. ``restore()`` (also run at
/// deinit) puts the terminal back as it was. Nil when standard input is not a terminal, so a
/// script's pipe or file is never read.
final class TerminalKeys {
    private var saved = termios()
    private var restored = false

    /// Starts reading; `actions` maps a lowercase ASCII key to what it does. The actions run on
    /// the reading thread.
    init?(_ actions: [Character: @Sendable () -> Void]) {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return nil }
        var byByte: [UInt8: @Sendable () -> Void] = [:]
        for (key, action) in actions {
            guard let a = key.asciiValue else { continue }
            byByte[a] = action
            if let upper = Character(key.uppercased()).asciiValue { byByte[upper] = action }
        }
        let table = byByte
        Thread.detachNewThread {
            var byte: UInt8 = 0
            // Until the end of input or an error: then no more keys.
            while case .success(1) = valueOrErrno({ read(STDIN_FILENO, &byte, 1) }) {
                table[byte]?()
            }
        }
    }

    /// Puts the terminal back in the mode it had before (once; later calls do nothing).
    func restore() {
        guard !restored else { return }
        restored = true
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }

    deinit { restore() }
}
