// The syntax tree of a parsed chat template: expressions and statements.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace difftx::chat {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    literal,    // value
    name,       // name
    list,       // args: the items (name "tuple": a tuple literal)
    dict,       // args: key, value, key, value, ...
    attribute,  // args[0].name
    item,       // args[0][args[1]]
    slice,      // args[0][args[1]:args[2]:args[3]] (a null ExprPtr is an omitted part)
    call,       // args[0](args[1:], named)
    filter,     // args[0] | name(args[1:], named)
    test,       // args[0] is name(args[1:], named)
    not_,       // not args[0]
    negate,     // -args[0]
    plus,       // +args[0]
    binary,     // args[0] op args[1]: + - * / // % **
    concat,     // args joined by ~
    compare,    // args[0] ops[0] args[1] ops[1] args[2] ...: == != < > <= >= in notin
    and_,
    or_,
    conditional,  // args[1] if args[0] else args[2] (args[2] null: undefined)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;  // name, attribute, filter, test, binary operator
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> named;
  std::vector<std::string> ops;
};

struct Stmt;
using Body = std::vector<std::shared_ptr<const Stmt>>;

struct Stmt {
  enum class Kind {
    text, output, if_, for_, set, set_block, filter_block, break_, continue_, macro, call_block, scope
  };
  Kind kind;
  int line = 0;
  std::string text;                  // text
  ExprPtr expr;                      // output, set's value, for's iterable, call_block's call
  std::vector<std::pair<ExprPtr, Body>> branches;  // if / elif: condition and body
  // for's body and else; if's else; the body of set_block, filter_block, macro, call_block (the caller), scope
  Body body, else_body;
  // for's loop variables; set's name (and attribute: ns.attr); macro's name ("caller" for a
  // call_block), then its parameters
  std::vector<std::string> targets;
  ExprPtr filter;                      // for ... if filter
  // set_block's {% set x | f %}, filter_block's {% filter f | g %}: filter nodes without input
  std::vector<ExprPtr> block_filters;
  std::vector<ExprPtr> defaults;       // macro, call_block: each parameter's default (null: none)
  bool takes_caller = false;           // macro: its body names `caller`, so a call block may pass one
};

}  // namespace difftx::chat
