#include "ast/Source.h"

namespace sonde {

SourceFile::SourceFile(std::string n, std::string t, bool lib)
    : name(std::move(n)), text(std::move(t)), isLibrary(lib) {
  lineStarts_.push_back(0);
  for (uint32_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      lineStarts_.push_back(i + 1);
}

std::string_view SourceFile::line(uint32_t lineNo) const {
  if (lineNo == 0 || lineNo > lineStarts_.size())
    return {};
  uint32_t begin = lineStarts_[lineNo - 1];
  uint32_t end = lineNo < lineStarts_.size() ? lineStarts_[lineNo] - 1
                                             : static_cast<uint32_t>(text.size());
  std::string_view v(text);
  v = v.substr(begin, end - begin);
  if (!v.empty() && v.back() == '\r')
    v.remove_suffix(1);
  return v;
}

const SourceFile *SourceManager::add(std::string name, std::string text, bool isLibrary) {
  files_.push_back(std::make_unique<SourceFile>(std::move(name), std::move(text), isLibrary));
  return files_.back().get();
}

} // namespace sonde
