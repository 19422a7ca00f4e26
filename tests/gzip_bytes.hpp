#pragma once
// gzip-compressed bytes made with zlib, for tests of the compressed inputs.
#include <zlib.h>

#include <string>

namespace mfu::test {

/// `in` as one gzip member at zlib level `level`.
inline std::string gzip_bytes(const std::string& in, int level = 6) {
  z_stream zs{};
  deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, in.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace mfu::test
