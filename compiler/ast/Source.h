// Source files, locations and tokens shared by every pass.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sonde {

// One script or tapset file, kept whole so diagnostics can echo its lines.
struct SourceFile {
  std::string name; // as given on the command line ("<input>" for -e)
  std::string text;
  bool isLibrary = false; // tapset file from stdlib/ or -I

  SourceFile(std::string n, std::string t, bool lib = false);
  // 1-based line; returns the line without its newline ("" when out of range).
  std::string_view line(uint32_t lineNo) const;

private:
  std::vector<uint32_t> lineStarts_;
};

struct SourceLoc {
  const SourceFile *file = nullptr;
  uint32_t line = 0; // 1-based; 0 = no location
  uint32_t col = 0;  // 1-based, in bytes

  bool valid() const { return file != nullptr && line != 0; }
};

// What stap calls the token kind in "identifier 'x' at f:1:2".
enum class TokenKind : uint8_t {
  Identifier,
  Operator,
  String,
  Number,
  Keyword,
  EmbeddedCode,
  EndOfFile
};

// The token that names an AST node in diagnostics. `text` is the token as written
// (a string literal without quotes and with escapes decoded).
struct Token {
  TokenKind kind = TokenKind::Identifier;
  std::string text;
  SourceLoc loc;
};

// Owns every SourceFile for the lifetime of a compilation.
class SourceManager {
public:
  const SourceFile *add(std::string name, std::string text, bool isLibrary = false);

private:
  std::vector<std::unique_ptr<SourceFile>> files_;
};

} // namespace sonde
