#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord framing, and
// TFRecord's mask of it (tensorflow/core/lib/hash/crc32c.h: rotate right by 15, add 0xa282ead8).

#include <cstdint>
#include <string_view>

namespace mfu::detail {

/// CRC-32C of `data` (RFC 3720, appendix B.4: "123456789" -> 0xE3069283).
[[nodiscard]] std::uint32_t crc32c(std::string_view data);

/// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
[[nodiscard]] std::uint32_t masked_crc32c(std::string_view data);

}  // namespace mfu::detail
