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
    call,       // args[0](args[1:], named, *star_args, **star_kwargs)
    filter,     // args[0] | name(args[1:], named, *star_args, **star_kwargs)
    test,       // args[0] is name(args[1:], named, *star_args, **star_kwargs)
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
  ExprPtr star_args, star_kwargs;  // a call's *args and **kwargs (null: none)
  std::vector<std::string> ops;
};

struct Stmt;
using Body = std::vector<std::shared_ptr<const Stmt>>;

struct Stmt {
  enum class Kind {
    text, output, if_, for_, set, set_block, filter_block, break_, continue_, macro, call_block,
    scope  // its body in a scope of its own: {% with %} (binding target to expr first), {% generation %}
  };
  Kind kind;
  int line = 0;
  std::string text;                  // text
  // output, set's value, for's iterable, call_block's call, scope's values (a tuple: with's)
  ExprPtr expr;
  // what for, set, set_block and scope (with) assign to: a name, a tuple of targets (unpacked),
  // or an attribute of a namespace (set only); scope: null when it binds nothing
  ExprPtr target;
  std::vector<std::pair<ExprPtr, Body>> branches;  // if / elif: condition and body
  // for's body and else; if's else; the body of set_block, filter_block, macro, call_block (the caller), scope
  Body body, else_body;
  // macro's name ("caller" for a call_block), then its parameters
  std::vector<std::string> targets;
  ExprPtr filter;                      // for ... if filter
  bool recursive = false;              // for ... recursive: loop(items) renders the body again
  // set_block's {% set x | f %}, filter_block's {% filter f | g %}: filter nodes without input
  std::vector<ExprPtr> block_filters;
  std::vector<ExprPtr> defaults;       // macro, call_block: each parameter's default (null: none)
  // macro, call_block: its body reads `caller` (a call block may pass one), `varargs` (it takes
  // extra positional arguments) or `kwargs` (extra keyword arguments), none of them a parameter
  bool takes_caller = false, takes_varargs = false, takes_kwargs = false;
};

}  // namespace difftx::chat
