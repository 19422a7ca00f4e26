#pragma once
// Decompressing byte sources (gzip with ISA-L's inflate, zstd), and a read-ahead wrapper that
// runs one on a thread of its own.

#include <memory>
#include <string>

#include "io/source.hpp"

namespace mfu::detail {

/// gzip members (concatenated ones too) of `raw`; truncated() when the last one is cut off.
[[nodiscard]] std::unique_ptr<ByteSource> gzip_source(std::unique_ptr<ByteSource> raw,
                                                      std::string name);
/// zstd frames of `raw`.
[[nodiscard]] std::unique_ptr<ByteSource> zstd_source(std::unique_ptr<ByteSource> raw,
                                                      std::string name);
/// `inner` read ahead on a thread of its own, in blocks of 1 MiB, at most 4 blocks ahead: the
/// inflater and the parser each keep a core busy. An error reading `inner` is thrown by the
/// read() that reaches it. Not for sources that may block for long (stdin).
[[nodiscard]] std::unique_ptr<ByteSource> read_ahead(std::unique_ptr<ByteSource> inner);

}  // namespace mfu::detail
