// Splits a chat template into tokens as jinja2's lexer does with trim_blocks and lstrip_blocks
// on: text between tags (whitespace already stripped where `-`, trim_blocks and lstrip_blocks
// say), tag delimiters, and the names, literals and operators inside tags. Comments vanish.
#pragma once
#include <string>
#include <vector>

namespace difftx::chat {

struct Token {
  enum class Type { text, variable_begin, variable_end, block_begin, block_end, name, string, integer, number,
                    op, end };
  Type type;
  std::string value;  // text, name, operator, a string literal unescaped, a number's digits
  int line;
};

// Errors (an unclosed tag or string, a stray character) are difftx::Error naming the line.
std::vector<Token> lex(const std::string& source);

}  // namespace difftx::chat
