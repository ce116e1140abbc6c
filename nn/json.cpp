#include <ember/nn/json.h>

#include <cstdio>
#include <stdexcept>

namespace ember::json {

const Value* Value::find(const std::string& key) const {
  for (const auto& kv : members)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

bool Value::is_int() const {
  if (kind != Number || text.empty() || text == "-") return false;
  for (size_t i = 0; i < text.size(); ++i)
    if (!(isdigit(static_cast<unsigned char>(text[i])) || (i == 0 && text[i] == '-'))) return false;
  return text.size() <= 18;  // fits a long long without overflow
}

long long Value::as_int() const { return std::stoll(text); }

namespace {

struct Parser {
  const std::string& s;
  size_t i = 0;
  int depth = 0;

  [[noreturn]] void fail(const std::string& why) {
    throw std::runtime_error(why + " at byte " + std::to_string(i));
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  void literal(const char* word) {
    for (const char* p = word; *p; ++p, ++i)
      if (i >= s.size() || s[i] != *p) fail("invalid literal");
  }
  unsigned hex4() {
    if (i + 4 > s.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s[i++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else fail("bad \\u escape");
    }
    return v;
  }
  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  std::string string() {
    ws();
    if (i >= s.size() || s[i] != '"') fail("expected a string");
    ++i;
    std::string out;
    while (true) {
      if (i >= s.size()) fail("unterminated string");
      char c = s[i++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i >= s.size()) fail("unterminated string");
      char e = s[i++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < s.size() && s[i] == '\\' && s[i + 1] == 'u') {
            i += 2;
            unsigned lo = hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  Value value() {
    if (++depth > 64) fail("nesting too deep");
    ws();
    if (i >= s.size()) fail("unexpected end");
    Value v;
    char c = s[i];
    if (c == '{') {
      ++i;
      v.kind = Value::Object;
      if (!eat('}')) {
        do {
          std::string k = string();
          expect(':');
          v.members.emplace_back(std::move(k), value());
        } while (eat(','));
        expect('}');
      }
    } else if (c == '[') {
      ++i;
      v.kind = Value::Array;
      if (!eat(']')) {
        do v.items.push_back(value());
        while (eat(','));
        expect(']');
      }
    } else if (c == '"') {
      v.kind = Value::String;
      v.text = string();
    } else if (c == 't') {
      literal("true");
      v.kind = Value::Bool;
      v.boolean = true;
    } else if (c == 'f') {
      literal("false");
      v.kind = Value::Bool;
    } else if (c == 'n') {
      literal("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Value::Number;
      size_t b = i;
      while (i < s.size() && (isdigit(static_cast<unsigned char>(s[i])) || s[i] == '-' || s[i] == '+' ||
                              s[i] == '.' || s[i] == 'e' || s[i] == 'E'))
        ++i;
      v.text = s.substr(b, i - b);
    } else {
      fail("unexpected character");
    }
    --depth;
    return v;
  }
};

}  // namespace

Value parse(const std::string& text) {
  Parser p{text};
  Value v = p.value();
  p.ws();
  if (p.i != text.size()) p.fail("trailing data");
  return v;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  char buf[16];
  auto u = [&](unsigned cp) {
    std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    out += buf;
  };
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7F) u(c);  // Python escapes DEL too
          else out += static_cast<char>(c);
      }
      continue;
    }
    // Decode one UTF-8 sequence; invalid bytes pass through as U+FFFD.
    int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : -1;
    unsigned cp = n == 3 ? c & 0x07 : n == 2 ? c & 0x0F : c & 0x1F;
    bool ok = n > 0 && i + n < s.size() + 1;
    for (int k = 1; ok && k <= n; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (!ok) {
      u(0xFFFD);
      ++i;
      continue;
    }
    i += n + 1;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      u(0xD800 + (cp >> 10));
      u(0xDC00 + (cp & 0x3FF));
    } else {
      u(cp);
    }
  }
  return out + "\"";
}

}  // namespace ember::json
