#include "MarkerRecords.h"

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace sonde::e2e {

std::vector<MarkerRecord> readRecords(const std::string &path, std::string &error) {
  std::vector<MarkerRecord> records;
  std::ifstream in(path);
  if (!in) {
    error = "cannot read " + path;
    return records;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    MarkerRecord record;
    auto tab = line.find('\t');
    if (tab != std::string::npos) {
      record.text = line.substr(tab + 1);
      line.resize(tab);
    }
    std::istringstream fields(line);
    size_t count = 0;
    fields >> record.provider >> record.name >> count;
    for (size_t i = 0; i < count && fields; ++i) {
      int64_t value = 0;
      fields >> value;
      record.values.push_back(value);
    }
    if (!fields || record.values.size() != count) {
      error = path + ":" + std::to_string(number) + ": malformed record";
      return {};
    }
    records.push_back(std::move(record));
  }
  return records;
}

std::string stapHex(int64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, static_cast<uint64_t>(value));
  return text;
}

} // namespace sonde::e2e
