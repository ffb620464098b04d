#include "dot_scanner.hpp"

#include <cctype>

#include "text.hpp"

namespace krc::frontend {

namespace {

bool id_start(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool id_char(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }

class Scanner {
 public:
  explicit Scanner(const std::string& text) : text_(text) {}

  std::vector<DotToken> run() {
    while (skip_space_and_comments()) {
      std::size_t start = pos_, line = line_;
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        if (!closes(start, '"')) {
          push(DotToken::Unclosed, "string", start, line);
          break;
        }
        std::string value = quoted();
        // "a" + "b" is one string.
        for (;;) {
          std::size_t save_pos = pos_, save_line = line_;
          if (skip_space_and_comments() && text_[pos_] == '+') {
            ++pos_;
            if (skip_space_and_comments() && text_[pos_] == '"') {
              value += quoted();
              continue;
            }
          }
          pos_ = save_pos;
          line_ = save_line;
          break;
        }
        push(DotToken::Id, value, start, line, DotToken::Quoted);
      } else if (c == '<') {
        std::string value = html();
        if (value.empty()) {
          push(DotToken::Unclosed, "HTML string", start, line);
          break;
        }
        push(DotToken::Id, std::move(value), start, line, DotToken::Html);
      } else if (id_start(c)) {
        while (pos_ < text_.size() && id_char(static_cast<unsigned char>(text_[pos_]))) ++pos_;
        push(DotToken::Id, text_.substr(start, pos_ - start), start, line);
      } else if (c == '-' && pos_ + 1 < text_.size() &&
                 (text_[pos_ + 1] == '>' || text_[pos_ + 1] == '-')) {
        pos_ += 2;
        push(DotToken::EdgeOp, text_.substr(start, 2), start, line);
      } else if (std::isdigit(c) || c == '.' || c == '-') {
        ++pos_;
        while (pos_ < text_.size() &&
               (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.'))
          ++pos_;
        push(DotToken::Id, text_.substr(start, pos_ - start), start, line);
      } else if (std::string("{}[];,=:").find(static_cast<char>(c)) != std::string::npos) {
        ++pos_;
        push(DotToken::Punct, std::string(1, static_cast<char>(c)), start, line);
      } else {
        ++pos_;
        push(DotToken::Other, std::string(1, static_cast<char>(c)), start, line);
      }
    }
    return std::move(tokens_);
  }

 private:
  void push(DotToken::Kind kind, std::string text, std::size_t offset, std::size_t line,
            DotToken::Form form = DotToken::Bare) {
    tokens_.push_back(DotToken{kind, std::move(text), line, offset, tokens_.size(), form});
  }

  // Whether the string opening at `start` is closed before the end of the text.
  bool closes(std::size_t start, char quote) const {
    for (std::size_t i = start + 1; i < text_.size(); ++i) {
      if (text_[i] == '\\') {
        ++i;
        continue;
      }
      if (text_[i] == quote) return true;
    }
    return false;
  }

  void advance() {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }

  // Skips blanks and comments; false at the end of the text.
  bool skip_space_and_comments() {
    for (;;) {
      while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
        advance();
      if (pos_ >= text_.size()) return false;
      bool line_start = pos_ == 0 || text_[pos_ - 1] == '\n';
      if (text_.compare(pos_, 2, "//") == 0 || (line_start && text_[pos_] == '#')) {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (text_.compare(pos_, 2, "/*") == 0) {
        const std::size_t start = pos_, line = line_;
        pos_ += 2;
        while (pos_ < text_.size() && text_.compare(pos_, 2, "*/") != 0) advance();
        if (pos_ >= text_.size()) push(DotToken::Unclosed, "comment", start, line);
        pos_ = std::min(text_.size(), pos_ + 2);
      } else if (text_.compare(pos_, 2, "\\\n") == 0) {
        advance();
        advance();
      } else {
        return true;
      }
    }
  }

  std::string quoted() {
    std::string value;
    advance();  // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
        char next = text_[pos_ + 1];
        if (next == '\n') {  // line continuation
          advance();
          advance();
          continue;
        }
        if (next == '"') {
          value += '"';
          pos_ += 2;
          continue;
        }
        value += '\\';  // any other escaped character stays as written, the pair as a unit
        advance();
      }
      value += text_[pos_];
      advance();
    }
    if (pos_ < text_.size()) advance();  // closing quote
    return value;
  }

  // An HTML string, brackets included; "" (and the position unchanged) when it is unclosed.
  std::string html() {
    const std::size_t start = pos_, start_line = line_;
    int depth = 0;
    do {
      if (text_[pos_] == '<')
        ++depth;
      else if (text_[pos_] == '>')
        --depth;
      advance();
    } while (pos_ < text_.size() && depth > 0);
    if (depth > 0) {
      pos_ = text_.size();
      line_ = start_line;
      return "";
    }
    return text_.substr(start, pos_ - start);
  }

  const std::string& text_;
  std::size_t pos_ = 0, line_ = 1;
  std::vector<DotToken> tokens_;
};

}  // namespace

std::vector<DotToken> scan_dot(const std::string& text) { return Scanner(text).run(); }

std::map<std::string, const DotToken*> first_node_mentions(const std::vector<DotToken>& tokens) {
  std::map<std::string, const DotToken*> first;
  int bracket_depth = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const DotToken& t = tokens[i];
    if (t.kind == DotToken::Punct) {
      if (t.text == "[") ++bracket_depth;
      if (t.text == "]" && bracket_depth > 0) --bracket_depth;
      continue;
    }
    if (t.kind != DotToken::Id || bracket_depth > 0) continue;
    auto is_punct = [&](std::size_t j, const char* p) {
      return j < tokens.size() && tokens[j].kind == DotToken::Punct && tokens[j].text == p;
    };
    if (is_punct(i + 1, "=") || (i > 0 && is_punct(i - 1, "="))) continue;  // a = b
    if (i > 0 && is_punct(i - 1, ":")) continue;                            // a port: n:p
    std::string word = lowercase(t.text);
    if (word == "strict" || word == "node" || word == "edge") continue;
    if (word == "digraph" || word == "graph" || word == "subgraph") {
      if (i + 1 < tokens.size() && tokens[i + 1].kind == DotToken::Id) ++i;  // its name
      continue;
    }
    first.emplace(t.text, &t);
  }
  return first;
}

}  // namespace krc::frontend
