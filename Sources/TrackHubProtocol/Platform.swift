// Links the C math library (`rounded()`, `truncatingRemainder` call into it) without Foundation.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
