// The records the end-to-end targets write for each marker they fire
// (e2e_record.h), and what a script's printf makes of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sonde::e2e {

struct MarkerRecord {
  std::string provider;
  std::string name;
  std::vector<int64_t> values; // $arg1..$argN as 64-bit values
  std::string text;            // the string an argument points at, if any
};

// Parses a record file; a malformed line is an error naming it.
std::vector<MarkerRecord> readRecords(const std::string &path, std::string &error);

// stap's %#x of a long: "0x" then lowercase hex of its 64-bit pattern ("0x0" for 0).
std::string stapHex(int64_t value);

} // namespace sonde::e2e
