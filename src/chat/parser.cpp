#include "chat/parser.h"

#include <algorithm>
#include <initializer_list>
#include <set>

#include "chat/filters.h"
#include "chat/lexer.h"
#include "core/error.h"

namespace difftx::chat {
namespace {

using T = Token::Type;

// The macro's (or caller's) special names its body reads: caller, varargs, kwargs.
void take_special_names(Stmt& macro);

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Body parse_all() {
    std::string end_tag;
    Body body = parse_body({}, end_tag);
    return body;
  }

 private:
  const Token& cur() const { return t_[i_]; }
  const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  bool is_op(const char* op) const { return cur().type == T::op && cur().value == op; }
  bool is_name(const char* name) const { return cur().type == T::name && cur().value == name; }
  // Consumes the operator or name when it is the current token.
  bool accept_op(const char* op) { return is_op(op) && (++i_, true); }
  bool accept_name(const char* name) { return is_name(name) && (++i_, true); }

  template <typename... Parts>
  [[noreturn]] void error(const Parts&... parts) const {
    fail("chat template line ", cur().line, ": ", parts...);
  }
  std::string describe(const Token& tok) const {
    switch (tok.type) {
      case T::end: return "the end of the template";
      case T::block_end: return "'%}'";
      case T::variable_end: return "'}}'";
      case T::text: return "text";
      default: return "'" + tok.value + "'";
    }
  }
  void expect_op(const char* op) {
    if (!is_op(op)) error("expected '", op, "', found ", describe(cur()));
    ++i_;
  }
  std::string expect_name() {
    if (cur().type != T::name) error("expected a name, found ", describe(cur()));
    return t_[i_++].value;
  }
  void expect_block_end() {
    if (cur().type != T::block_end) error("expected '%}', found ", describe(cur()));
    ++i_;
  }
  // A tag's body up to {% close %}: the tag's '%}', the statements, the closing tag's '%}'.
  Body body_until(const char* close, std::string& end) {
    expect_block_end();
    Body body = parse_body({close}, end);
    expect_block_end();
    return body;
  }

  // Statements up to one of the tags in `stop` (returned in end_tag, its name consumed).
  Body parse_body(const std::set<std::string>& stop, std::string& end_tag) {
    Body body;
    while (true) {
      const Token& tok = cur();
      if (tok.type == T::end) {
        if (!stop.empty()) error("missing {% ", *stop.rbegin(), " %} (the template ended)");
        return body;
      }
      if (tok.type == T::text) {
        auto s = std::make_shared<Stmt>();
        s->kind = Stmt::Kind::text;
        s->text = tok.value;
        ++i_;
        body.push_back(s);
      } else if (tok.type == T::variable_begin) {
        auto s = std::make_shared<Stmt>();
        s->kind = Stmt::Kind::output;
        s->line = tok.line;
        ++i_;
        s->expr = value_tuple(true);
        if (cur().type != T::variable_end) error("expected '}}', found ", describe(cur()));
        ++i_;
        body.push_back(s);
      } else {
        ++i_;  // block_begin
        if (cur().type != T::name) error("expected a tag name after '{%', found ", describe(cur()));
        if (stop.count(cur().value)) {
          end_tag = t_[i_++].value;
          return body;
        }
        body.push_back(statement());
      }
    }
  }

  std::shared_ptr<Stmt> statement() {
    const Nest nest(*this);
    const std::string tag = cur().value;
    auto s = std::make_shared<Stmt>();
    s->line = cur().line;
    ++i_;
    std::string end;
    if (tag == "if") {
      s->kind = Stmt::Kind::if_;
      ExprPtr cond = value_tuple(false);
      expect_block_end();
      while (true) {
        Body body = parse_body({"elif", "else", "endif"}, end);
        s->branches.emplace_back(cond, std::move(body));
        if (end == "elif") {
          cond = value_tuple(false);
          expect_block_end();
          continue;
        }
        if (end == "else") s->else_body = body_until("endif", end);
        else expect_block_end();
        return s;
      }
    }
    if (tag == "for") {
      s->kind = Stmt::Kind::for_;
      s->target = assign_target(false);
      if (!accept_name("in")) error("expected 'in' in a for tag, found ", describe(cur()));
      s->expr = value_tuple(false);
      if (accept_name("if")) s->filter = expression();
      s->recursive = accept_name("recursive");
      expect_block_end();
      ++loops_;
      s->body = parse_body({"else", "endfor"}, end);
      --loops_;
      if (end == "else") s->else_body = body_until("endfor", end);
      else expect_block_end();
      return s;
    }
    if (tag == "set") {
      s->target = assign_target(true);
      if (accept_op("=")) {
        s->kind = Stmt::Kind::set;
        s->expr = value_tuple(true);
        expect_block_end();
        return s;
      }
      s->kind = Stmt::Kind::set_block;
      while (accept_op("|")) s->block_filters.push_back(filter(nullptr));
      s->body = body_until("endset", end);
      return s;
    }
    if (tag == "macro") {
      s->kind = Stmt::Kind::macro;
      s->targets.push_back(expect_name());
      expect_op("(");
      parameters(*s);
      expect_block_end();
      s->body = macro_body("endmacro", end);
      take_special_names(*s);
      if (cur().type == T::name) ++i_;  // {% endmacro name %}
      expect_block_end();
      return s;
    }
    if (tag == "call") {  // {% call(params) m(args) %}body{% endcall %}: m gets the body as caller()
      s->kind = Stmt::Kind::call_block;
      s->targets.push_back("caller");
      if (accept_op("(")) parameters(*s);
      s->expr = expression();
      if (s->expr->kind != Expr::Kind::call) error("expected a call in a call tag");
      expect_block_end();
      s->body = macro_body("endcall", end);
      take_special_names(*s);
      expect_block_end();
      return s;
    }
    if (tag == "filter") {  // {% filter f(args) | g %}body{% endfilter %}: prints the body's output filtered
      s->kind = Stmt::Kind::filter_block;
      s->block_filters.push_back(filter(nullptr));
      while (accept_op("|")) s->block_filters.push_back(filter(nullptr));
      s->body = body_until("endfilter", end);
      return s;
    }
    if (tag == "generation") {  // transformers' AssistantTracker: renders its body as a call block
      s->kind = Stmt::Kind::scope;
      expect_block_end();
      s->body = macro_body("endgeneration", end);  // a caller's body: a break there would leave no loop
      expect_block_end();
      return s;
    }
    if (tag == "with") {  // {% with a = 1, (b, c) = x %}: a scope with the targets bound to the values
      s->kind = Stmt::Kind::scope;
      std::vector<ExprPtr> targets, values;
      while (cur().type != T::block_end) {
        if (!targets.empty()) expect_op(",");
        targets.push_back(assign_target(false));
        expect_op("=");
        values.push_back(expression());  // in the scope around the tag: later ones do not see earlier targets
      }
      if (!targets.empty()) {
        s->target = tuple_of(std::move(targets), s->line);
        s->expr = tuple_of(std::move(values), s->line);
      }
      s->body = body_until("endwith", end);
      return s;
    }
    if (tag == "print") {  // {% print a, b %}: prints each expression
      s->kind = Stmt::Kind::output;
      std::vector<ExprPtr> parts;
      while (cur().type != T::block_end) {
        if (!parts.empty()) expect_op(",");
        parts.push_back(expression());
      }
      s->expr = make(Expr::Kind::concat, s->line, std::move(parts));
      expect_block_end();
      return s;
    }
    if (tag == "break" || tag == "continue") {
      if (loops_ == 0) error("'", tag, "' outside a for loop");
      s->kind = tag == "break" ? Stmt::Kind::break_ : Stmt::Kind::continue_;
      expect_block_end();
      return s;
    }
    // include, import, from and extends need a template loader, which transformers does not give;
    // do and trans need extensions it does not load.
    static const std::set<std::string> known_unsupported = {
        "include", "import", "from", "extends", "block", "do", "autoescape", "trans"};
    if (known_unsupported.count(tag)) error("unsupported construct: the '", tag, "' tag");
    error("unknown tag '", tag, "'");
  }

  // A macro's or caller's parameters up to and including ')', with their defaults.
  void parameters(Stmt& s) {
    while (!is_op(")")) {
      s.targets.push_back(expect_name());
      ExprPtr fallback;
      if (accept_op("=")) {
        fallback = expression();
      } else if (!s.defaults.empty() && s.defaults.back()) {
        error("a macro parameter without a default after one with a default");
      }
      s.defaults.push_back(fallback);
      if (!is_op(")")) expect_op(",");
    }
    ++i_;
  }

  // A macro's or caller's body up to {% close %} (a break there would leave no loop).
  Body macro_body(const char* close, std::string& end) {
    const int saved_loops = loops_;
    loops_ = 0;
    Body body = parse_body({close}, end);
    loops_ = saved_loops;
    return body;
  }

  ExprPtr make(Expr::Kind kind, int line, std::vector<ExprPtr> args = {}) {
    auto e = std::make_shared<Expr>();
    e->kind = kind;
    e->line = line;
    e->args = std::move(args);
    return e;
  }

  // Nesting deeper than this is refused rather than risking the stack on a hostile template.
  static constexpr int kMaxNesting = 600;  // counted per tag and per operator level
  void enter_level() {
    if (++nesting_ > kMaxNesting) error("tags and expressions nested too deeply (a limit of ", kMaxNesting, " levels)");
  }
  struct Nest {
    Parser& p;
    explicit Nest(Parser& parser) : p(parser) { p.enter_level(); }
    ~Nest() { --p.nesting_; }
  };
  // A chain built in a loop (a + b + c, x.a[0](), x|f|g) is a tree one level deeper per link, which
  // evaluating and freeing it recurse through: each link counts as a level until the chain ends.
  struct Chain {
    Parser& p;
    int links = 0;
    explicit Chain(Parser& parser) : p(parser) {}
    void link() { ++links, p.enter_level(); }
    ~Chain() { p.nesting_ -= links; }
  };

  ExprPtr tuple_of(std::vector<ExprPtr> items, int line) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::list;
    e->line = line;
    e->name = "tuple";
    e->args = std::move(items);
    return e;
  }

  // Where jinja2 ends a tuple without parentheses: at '%}', '}}' or ')'.
  bool at_tuple_end() const { return cur().type == T::block_end || cur().type == T::variable_end || is_op(")"); }

  // Expressions separated by commas, a tuple when there is a comma (jinja2's parse_tuple): what
  // {{ }}, set's value, for's iterable and if's condition take (the last two without a conditional
  // expression). parenthesised: in ( ), where () is the empty tuple.
  ExprPtr value_tuple(bool with_conditional, bool parenthesised = false) {
    const int line = cur().line;
    std::vector<ExprPtr> items;
    bool tuple = false;
    while (!at_tuple_end()) {
      items.push_back(with_conditional ? expression() : or_expr());
      if (!accept_op(",")) break;
      tuple = true;
    }
    if (tuple || (items.empty() && parenthesised)) return tuple_of(std::move(items), line);
    if (items.empty()) error("expected an expression, found ", describe(cur()));
    return items[0];
  }

  // What set, for and with assign to (jinja2's parse_assign_target): a name, or names and
  // parenthesised targets separated by commas, unpacked; with_namespace: also ns.attr.
  ExprPtr assign_target(bool with_namespace) {
    const int line = cur().line;
    if (with_namespace && cur().type == T::name && peek().type == T::op && peek().value == ".") {
      auto a = std::make_shared<Expr>();
      a->kind = Expr::Kind::attribute;
      a->line = line;
      a->args = {make_name(expect_name(), line)};
      ++i_;  // the dot
      a->name = expect_name();
      return a;
    }
    return target_tuple(false);
  }
  ExprPtr target_tuple(bool parenthesised) {
    const Nest nest(*this);
    const int line = cur().line;
    std::vector<ExprPtr> items;
    bool tuple = false;
    while (!at_tuple_end()) {
      if (accept_op("(")) {
        items.push_back(target_tuple(true));
        expect_op(")");
      } else {
        const Token& tok = cur();
        if (tok.type != T::name || tok.value == "true" || tok.value == "false" || tok.value == "none" ||
            tok.value == "True" || tok.value == "False" || tok.value == "None")
          error("cannot assign to ", describe(tok));
        items.push_back(make_name(expect_name(), tok.line));
      }
      if (!accept_op(",")) break;
      tuple = true;
    }
    if (tuple || (items.empty() && parenthesised)) return tuple_of(std::move(items), line);
    if (items.empty()) error("expected a name, found ", describe(cur()));
    return items[0];
  }

  ExprPtr make_name(std::string name, int line) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::name;
    e->line = line;
    e->name = std::move(name);
    return e;
  }

  ExprPtr expression() {
    const Nest nest(*this);
    ExprPtr e = or_expr();
    while (is_name("if")) {
      const int line = cur().line;
      ++i_;
      ExprPtr cond = or_expr();
      ExprPtr other;
      if (is_name("else")) {
        ++i_;
        other = expression();
      }
      e = make(Expr::Kind::conditional, line, {cond, e, other});
    }
    return e;
  }

  // Operands joined left to right by the keyword `word` (a or b or c).
  template <typename Operand>
  ExprPtr joined(const char* word, Expr::Kind kind, Operand operand) {
    ExprPtr e = operand();
    Chain chain(*this);
    while (is_name(word)) {
      chain.link();
      const int line = cur().line;
      ++i_;
      e = make(kind, line, {e, operand()});
    }
    return e;
  }
  ExprPtr or_expr() { return joined("or", Expr::Kind::or_, [&] { return and_expr(); }); }
  ExprPtr and_expr() { return joined("and", Expr::Kind::and_, [&] { return not_expr(); }); }

  ExprPtr not_expr() {
    const Nest nest(*this);
    if (is_name("not")) {
      const int line = cur().line;
      ++i_;
      return make(Expr::Kind::not_, line, {not_expr()});
    }
    return compare();
  }

  ExprPtr compare() {
    const int line = cur().line;
    ExprPtr first = math1();
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::compare;
    e->line = line;
    e->args.push_back(first);
    while (true) {
      if (cur().type == T::op && (cur().value == "==" || cur().value == "!=" || cur().value == "<" ||
                                  cur().value == ">" || cur().value == "<=" || cur().value == ">=")) {
        e->ops.push_back(t_[i_++].value);
      } else if (accept_name("in")) {
        e->ops.push_back("in");
      } else if (is_name("not") && peek().type == T::name && peek().value == "in") {
        i_ += 2;
        e->ops.push_back("notin");
      } else {
        break;
      }
      e->args.push_back(math1());
    }
    if (e->ops.empty()) return first;
    return e;
  }

  ExprPtr binary_of(ExprPtr left, const std::string& op, ExprPtr right, int line) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::binary;
    e->line = line;
    e->name = op;
    e->args = {std::move(left), std::move(right)};
    return e;
  }

  // Operands joined left to right by any of the operators `ops` (a + b - c).
  template <typename Operand>
  ExprPtr binary_ops(std::initializer_list<const char*> ops, Operand operand) {
    ExprPtr e = operand();
    Chain chain(*this);
    while (std::any_of(ops.begin(), ops.end(), [&](const char* op) { return is_op(op); })) {
      chain.link();
      const int line = cur().line;
      const std::string op = t_[i_++].value;
      e = binary_of(e, op, operand(), line);
    }
    return e;
  }
  ExprPtr math1() { return binary_ops({"+", "-"}, [&] { return concat(); }); }

  ExprPtr concat() {
    const int line = cur().line;
    std::vector<ExprPtr> parts = {math2()};
    while (accept_op("~")) parts.push_back(math2());
    if (parts.size() == 1) return parts[0];
    return make(Expr::Kind::concat, line, std::move(parts));
  }

  ExprPtr math2() { return binary_ops({"*", "/", "//", "%"}, [&] { return power(); }); }
  ExprPtr power() { return binary_ops({"**"}, [&] { return unary(true); }); }

  ExprPtr unary(bool with_filter) {
    const Nest nest(*this);
    const int line = cur().line;
    ExprPtr e;
    if (accept_op("-")) {
      e = make(Expr::Kind::negate, line, {unary(false)});
    } else if (accept_op("+")) {
      e = make(Expr::Kind::plus, line, {unary(false)});
    } else {
      e = primary();
    }
    e = postfix(e);
    if (with_filter) e = filter_expr(e);
    return e;
  }

  ExprPtr literal(Value v, int line) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::literal;
    e->line = line;
    e->value = std::move(v);
    return e;
  }
  ExprPtr int_literal(const std::string& digits, int line) {
    const std::optional<Int> i = parse_int(digits, 0);
    if (!i) error("integer literal ", digits, " is beyond 128 bits");
    return literal(Value::from(*i), line);
  }

  ExprPtr primary() {
    const Token& tok = cur();
    const int line = tok.line;
    if (tok.type == T::name) {
      ++i_;
      if (tok.value == "true" || tok.value == "True") return literal(Value::from(true), line);
      if (tok.value == "false" || tok.value == "False") return literal(Value::from(false), line);
      if (tok.value == "none" || tok.value == "None") return literal(Value::none(), line);
      return make_name(tok.value, line);
    }
    if (tok.type == T::string) {
      std::string s;
      while (cur().type == T::string) s += t_[i_++].value;
      return literal(Value::from(s), line);
    }
    if (tok.type == T::integer) {
      ++i_;
      return int_literal(tok.value, line);
    }
    if (tok.type == T::number) {
      ++i_;
      return literal(Value::from(*parse_float(tok.value)), line);
    }
    if (accept_op("(")) {  // (a), or a tuple: (), (a,), (a, b)
      ExprPtr e = value_tuple(true, true);
      expect_op(")");
      return e;
    }
    if (accept_op("[")) {
      std::vector<ExprPtr> items;
      comma_separated("]", [&] { items.push_back(expression()); });
      return make(Expr::Kind::list, line, std::move(items));
    }
    if (accept_op("{")) {
      std::vector<ExprPtr> items;
      comma_separated("}", [&] {
        items.push_back(expression());
        expect_op(":");
        items.push_back(expression());
      });
      return make(Expr::Kind::dict, line, std::move(items));
    }
    error("unexpected ", describe(tok));
  }

  // Items up to `close`, separated by commas (one may follow the last), `close` consumed.
  template <typename Item>
  void comma_separated(const char* close, Item item) {
    for (bool first = true; !accept_op(close); first = false) {
      if (!first) expect_op(",");
      if (accept_op(close)) return;
      item();
    }
  }

  ExprPtr postfix(ExprPtr e) {
    Chain chain(*this);
    while (true) {
      chain.link();
      const int line = cur().line;
      if (accept_op(".")) {
        if (cur().type == T::integer) {
          e = make(Expr::Kind::item, line, {e, int_literal(cur().value, line)});
          ++i_;
          continue;
        }
        auto a = std::make_shared<Expr>();
        a->kind = Expr::Kind::attribute;
        a->line = line;
        a->name = expect_name();
        a->args = {e};
        e = a;
      } else if (accept_op("[")) {
        e = subscript(e, line);
      } else if (is_op("(")) {
        e = call(e);
      } else {
        return e;
      }
    }
  }

  // x[key], x[a:b:c], or x[a, b]: a tuple key (jinja2 compiles a tuple of slices to Python that
  // does not compile; difftx refuses it).
  ExprPtr subscript(ExprPtr target, int line) {
    ExprPtr parts[3];
    bool is_slice = false;
    if (!is_op(":")) parts[0] = expression();
    if (accept_op(":")) {
      is_slice = true;
      if (!is_op("]") && !is_op(":") && !is_op(",")) parts[1] = expression();
      if (accept_op(":") && !is_op("]") && !is_op(",")) parts[2] = expression();
    }
    if (is_op(",")) {
      std::vector<ExprPtr> keys = {parts[0]};
      while (accept_op(",")) {
        if (is_slice || is_op(":")) error("unsupported construct: a slice in a tuple subscript");
        keys.push_back(expression());
        is_slice = is_op(":");
      }
      if (is_slice) error("unsupported construct: a slice in a tuple subscript");
      expect_op("]");
      return make(Expr::Kind::item, line, {target, tuple_of(std::move(keys), line)});
    }
    expect_op("]");
    if (!is_slice) return make(Expr::Kind::item, line, {target, parts[0]});
    return make(Expr::Kind::slice, line, {target, parts[0], parts[1], parts[2]});
  }

  // Arguments in parentheses, appended to e's args and named, with *args and **kwargs in the
  // order jinja2 takes them: positional, keyword and *args, then keyword and **kwargs.
  void call_args(Expr& e) {
    const int line = cur().line;
    expect_op("(");
    auto ensure = [&](bool ok) {
      if (!ok) fail("chat template line ", line, ": invalid syntax for function call expression");
    };
    while (!is_op(")")) {
      if (accept_op("*")) {
        ensure(!e.star_args && !e.star_kwargs);
        e.star_args = expression();
      } else if (accept_op("**")) {
        ensure(!e.star_kwargs);
        e.star_kwargs = expression();
      } else if (cur().type == T::name && peek().type == T::op && peek().value == "=") {
        ensure(!e.star_kwargs);
        const std::string key = t_[i_].value;
        i_ += 2;
        e.named.emplace_back(key, expression());
      } else {
        ensure(!e.star_args && !e.star_kwargs && e.named.empty());
        e.args.push_back(expression());
      }
      if (!is_op(")")) expect_op(",");
    }
    ++i_;
  }

  ExprPtr call(ExprPtr callee) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::call;
    e->line = cur().line;
    e->args = {std::move(callee)};
    call_args(*e);
    return e;
  }

  // `| name(args)` with the `|` consumed; input may be null (a block set's filters).
  ExprPtr filter(ExprPtr input) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::filter;
    e->line = cur().line;
    e->name = expect_name();
    e->args = {std::move(input)};
    if (is_op("(")) call_args(*e);
    return e;
  }

  ExprPtr filter_expr(ExprPtr e) {
    Chain chain(*this);
    while (true) {
      chain.link();
      if (accept_op("|")) {
        e = filter(e);
      } else if (is_name("is")) {
        const int line = cur().line;
        ++i_;
        const bool negated = accept_name("not");
        auto t = std::make_shared<Expr>();
        t->kind = Expr::Kind::test;
        t->line = line;
        t->name = expect_name();
        t->args = {e};
        const Token& c = cur();
        if (is_op("(")) {
          call_args(*t);
        } else if ((c.type == T::name && c.value != "else" && c.value != "or" && c.value != "and") ||
                   c.type == T::string || c.type == T::integer || c.type == T::number || is_op("[") ||
                   is_op("{")) {
          if (is_name("is")) error("tests cannot be chained with 'is'");
          t->args.push_back(postfix(primary()));
        }
        e = t;
        if (negated) e = make(Expr::Kind::not_, line, {e});
      } else if (is_op("(")) {
        e = call(e);
      } else {
        return e;
      }
    }
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int loops_ = 0;
  int nesting_ = 0;
};

// Calls visit(e, soft) on every expression in the statements, nested ones too; soft: within an if
// tag (its conditions and bodies) or a conditional expression, what jinja2 calls a soft frame.
template <typename Visit>
void walk(const Expr& e, bool soft, const Visit& visit) {
  soft = soft || e.kind == Expr::Kind::conditional;
  visit(e, soft);
  for (const auto& a : e.args)
    if (a) walk(*a, soft, visit);
  for (const auto& [name, a] : e.named) walk(*a, soft, visit);
  for (const auto& a : {e.star_args, e.star_kwargs})
    if (a) walk(*a, soft, visit);
}

template <typename Visit>
void walk(const Body& body, bool soft, const Visit& visit) {
  for (const auto& s : body) {
    if (s->expr) walk(*s->expr, soft, visit);  // output, set, for's iterable, call_block's call
    for (const auto& [cond, branch] : s->branches) {
      walk(*cond, true, visit);
      walk(branch, true, visit);
    }
    walk(s->else_body, s->kind == Stmt::Kind::if_, visit);
    walk(s->body, false, visit);  // loops, set and filter blocks, macros and callers have frames of their own
    if (s->filter) walk(*s->filter, false, visit);
    for (const auto& f : s->block_filters) walk(*f, false, visit);
    for (const auto& d : s->defaults)
      if (d) walk(*d, false, visit);
  }
}

// Of `names`, those the statements read before assigning them (jinja2's find_undeclared, which
// looks into nested macros too): assignment targets and parameters come before a statement's
// expressions and bodies.
void assigned(const Expr& target, std::set<std::string>& names) {
  if (target.kind == Expr::Kind::name) names.erase(target.name);
  if (target.kind == Expr::Kind::list)
    for (const auto& t : target.args) assigned(*t, names);
}
void undeclared(const Body& body, std::set<std::string>& names, std::set<std::string>& found) {
  const auto read = [&](const ExprPtr& e) {
    if (e) walk(*e, false, [&](const Expr& x, bool) {
      if (x.kind == Expr::Kind::name && names.count(x.name)) found.insert(x.name);
    });
  };
  for (const auto& s : body) {
    if (s->target) assigned(*s->target, names);
    if (s->kind == Stmt::Kind::macro || s->kind == Stmt::Kind::call_block)
      for (size_t i = 1; i < s->targets.size(); ++i) names.erase(s->targets[i]);
    read(s->expr);
    for (const auto& [cond, branch] : s->branches) {
      read(cond);
      undeclared(branch, names, found);
    }
    read(s->filter);
    for (const auto& f : s->block_filters) read(f);
    for (const auto& d : s->defaults) read(d);
    undeclared(s->body, names, found);
    undeclared(s->else_body, names, found);
  }
}

void take_special_names(Stmt& macro) {
  std::set<std::string> names = {"caller", "varargs", "kwargs"}, found;
  undeclared(macro.body, names, found);
  const auto parameter = [&](const char* name) {
    return std::find(macro.targets.begin() + 1, macro.targets.end(), name) != macro.targets.end();
  };
  macro.takes_caller = found.count("caller") > 0;
  macro.takes_varargs = found.count("varargs") && !parameter("varargs");
  macro.takes_kwargs = found.count("kwargs") && !parameter("kwargs");
}

// jinja2 refuses an unknown filter or test when it compiles a template, except in a soft frame,
// where the filter fails only when it runs.
void check_names(const Body& body) {
  walk(body, false, [](const Expr& e, bool soft) {
    if (soft) return;
    if (e.kind == Expr::Kind::filter && !has_filter(e.name))
      fail("chat template line ", e.line, ": unsupported construct: no filter named '", e.name, "'");
    if (e.kind == Expr::Kind::test && !has_test(e.name))
      fail("chat template line ", e.line, ": unsupported construct: no test named '", e.name, "'");
  });
}

}  // namespace

Body parse_template(const std::string& source) {
  Body body = Parser(lex(source)).parse_all();
  check_names(body);
  return body;
}

}  // namespace difftx::chat
