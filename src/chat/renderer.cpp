#include "chat/renderer.h"

#include <unordered_map>

#include "chat/access.h"
#include "chat/filters.h"
#include "chat/operators.h"
#include "chat/template_error.h"

namespace difftx::chat {
namespace {

using K = Expr::Kind;

class Renderer {
 public:
  explicit Renderer(const Dict& variables) {
    frames_.emplace_back();
    for (const auto& [k, v] : variables.items) frames_[0][k] = v;
  }

  std::string run(const Body& body) {
    exec(body);
    return std::move(out_);
  }

 private:
  enum class Flow { normal, break_, continue_ };

  Value lookup(const std::string& name) const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      const auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    return Value::undefined("'" + name + "' is undefined");
  }

  Flow exec(const Body& body) {
    for (const auto& s : body) {
      const Flow flow = exec(*s);
      if (flow != Flow::normal) return flow;
    }
    return Flow::normal;
  }

  // Render-time failures get the line of the statement they happened in (raise_exception's
  // message stays as the template wrote it).
  Flow exec(const Stmt& s) {
    try {
      return exec_statement(s);
    } catch (const RaisedError&) {
      throw;
    } catch (const LocatedError&) {
      throw;
    } catch (const TemplateError& e) {
      throw LocatedError(concat("chat template line ", s.line, ": ", e.what()));
    }
  }

  // Output, within kMaxTextBytes (value.h).
  void emit(const std::string& text) {
    if (out_.size() + text.size() > kMaxTextBytes)
      template_fail("the output passed ", kMaxTextBytes >> 20, " MiB (difftx stops there)");
    out_ += text;
  }
  // A loop iteration or a macro call, within kMaxSteps (value.h).
  void step() {
    if (++steps_ > kMaxSteps)
      template_fail("the template ran past ", kMaxSteps, " loop iterations and macro calls (difftx stops there)");
  }

  Flow exec_statement(const Stmt& s) {
    switch (s.kind) {
      case Stmt::Kind::text: emit(s.text); return Flow::normal;
      case Stmt::Kind::output: emit(str(eval(*s.expr))); return Flow::normal;
      case Stmt::Kind::if_:
        for (const auto& [cond, body] : s.branches)
          if (truthy(eval(*cond))) return exec(body);
        return exec(s.else_body);
      case Stmt::Kind::for_: exec_for(s); return Flow::normal;
      case Stmt::Kind::set: bind(*s.target, eval(*s.expr)); return Flow::normal;
      case Stmt::Kind::set_block: {
        Value v;
        const Flow flow = capture(s, v);
        if (flow == Flow::normal) bind(*s.target, v);
        return flow;
      }
      case Stmt::Kind::filter_block: {
        Value v;
        const Flow flow = capture(s, v);
        if (flow != Flow::normal) return flow;
        if (!v.is_string()) template_fail("sequence item: expected str instance, ", type_name(v), " found");
        emit(v.text);
        return flow;
      }
      case Stmt::Kind::macro: frames_.back()[s.targets[0]] = macro(s); return Flow::normal;
      case Stmt::Kind::call_block: call_block(s); return Flow::normal;
      case Stmt::Kind::scope: {
        const Value values = s.target ? eval(*s.expr) : Value();
        frames_.emplace_back();
        if (s.target) bind(*s.target, values);
        const Flow flow = exec(s.body);
        frames_.pop_back();
        return flow;
      }
      case Stmt::Kind::break_: return Flow::break_;
      case Stmt::Kind::continue_: return Flow::continue_;
    }
    return Flow::normal;
  }

  // A set or filter block: its body runs in a scope of its own with its output captured, which the
  // block's filters then take (unless a break or continue left the body, which jinja2 then drops).
  Flow capture(const Stmt& s, Value& result) {
    std::string saved = std::move(out_);
    out_.clear();
    frames_.emplace_back();
    const Flow flow = exec(s.body);
    frames_.pop_back();
    result = Value::from(std::move(out_));
    out_ = std::move(saved);
    if (flow == Flow::normal)
      for (const auto& f : s.block_filters) result = apply_filter(f->name, result, call_args(*f, 1));
    return flow;
  }

  using Frame = std::unordered_map<std::string, Value>;

  // A macro sees the scopes around its definition (not its caller's) and its parameters; it
  // returns what its body printed.
  Value macro(const Stmt& s) {
    const size_t depth = frames_.size();
    return Value::from(Function([this, &s, depth](const CallArgs& a) {
      const auto end = frames_.begin() + static_cast<std::ptrdiff_t>(std::min(depth, frames_.size()));
      return run_macro(s, std::vector<Frame>(frames_.begin(), end), a);
    }));
  }

  // A call block: the call, with the block's body as the macro `caller` (which sees the scopes
  // of the call block); prints what the call returns.
  void call_block(const Stmt& s) {
    const Expr& call = *s.expr;
    CallArgs a = call_args(call, 1);
    a.named.emplace_back("caller", Value::from(Function([this, &s, scope = frames_](const CallArgs& args) {
                           return run_macro(s, scope, args);
                         })));
    emit(str(call_value(eval(*call.args[0]), a, call.line)));
  }

  // Runs `body` (which renders into out_) over the scopes `scope` and a new frame, as a call
  // `what` (for the recursion error); returns what it printed.
  template <typename Run>
  Value call_in_scope(std::vector<Frame> scope, const std::string& what, const Run& body) {
    if (macro_depth_ >= kMaxMacroDepth) template_fail(what, ": recursion deeper than ", kMaxMacroDepth, " calls");
    step();
    scope.emplace_back();
    std::swap(frames_, scope);  // scope now holds the calling code's frames
    std::string saved = std::move(out_);
    out_.clear();
    ++macro_depth_;
    auto restore = [&] {
      --macro_depth_;
      out_ = std::move(saved);
      frames_ = std::move(scope);
    };
    try {
      body();
    } catch (...) {
      restore();
      throw;
    }
    Value result = Value::from(std::move(out_));
    restore();
    return result;
  }

  // Runs a macro's (or a caller's) body over the scopes `scope` with its parameters bound as
  // jinja2's Macro does: positional arguments first, keywords for the parameters left, the rest
  // in varargs and kwargs where the body reads them (a default sees the parameters before it);
  // returns what the body printed.
  Value run_macro(const Stmt& s, std::vector<Frame> scope, const CallArgs& a) {
    const std::string& name = s.targets[0];
    const size_t n_params = s.targets.size() - 1, n_given = a.positional.size();
    std::vector<bool> taken(a.named.size());  // the keywords a parameter (or caller) took
    auto take = [&](const std::string& key) -> const Value* {
      for (size_t k = 0; k < a.named.size(); ++k)
        if (!taken[k] && a.named[k].first == key) return taken[k] = true, &a.named[k].second;
      return nullptr;
    };
    std::vector<const Value*> given(n_params);
    for (size_t i = 0; i < n_params; ++i)  // keywords fill the parameters that positions leave
      given[i] = i < n_given ? &a.positional[i] : take(s.targets[i + 1]);
    const Value* caller = s.takes_caller ? take("caller") : nullptr;
    Dict rest;  // the keywords left
    for (size_t k = 0; k < a.named.size(); ++k)
      if (!taken[k]) rest.items.push_back(a.named[k]);
    if (!s.takes_kwargs && !rest.items.empty()) {
      if (rest.find("caller"))
        template_fail("macro '", name, "' was invoked with two values for the special caller argument. This is most "
                      "likely a bug.");
      template_fail("macro '", name, "' takes no keyword argument '", rest.items.front().first, "'");
    }
    if (!s.takes_varargs && n_given > n_params)
      template_fail("macro '", name, "' takes not more than ", n_params, " argument(s)");
    return call_in_scope(std::move(scope), "macro '" + name + "'", [&] {
      Frame& frame = frames_.back();
      if (s.takes_caller) frame["caller"] = caller ? *caller : Value::undefined("No caller defined");
      if (s.takes_varargs)
        frame["varargs"] = Value::tuple(List(a.positional.begin() + static_cast<std::ptrdiff_t>(std::min(n_given, n_params)),
                                             a.positional.end()));
      if (s.takes_kwargs) frame["kwargs"] = Value::from(std::move(rest));
      for (size_t i = 0; i < n_params; ++i) {
        const std::string& param = s.targets[i + 1];
        Value v = given[i] ? *given[i]
                  : s.defaults[i] ? eval(*s.defaults[i])
                                  : Value::undefined("parameter '" + param + "' was not provided");
        frames_.back()[param] = std::move(v);
      }
      exec(s.body);
    });
  }

  Value call_value(const Value& callee, const CallArgs& a, int line) {
    if (callee.function) return (*callee.function)(a);  // a function, or a loop object
    if (callee.is_undefined()) fail_undefined(callee);
    template_fail("line ", line, ": '", type_name(callee), "' object is not callable");
  }

  // Assigns v to a target in the innermost scope: a name, a tuple of targets (v unpacked as
  // Python unpacks it) or a namespace's attribute.
  void bind(const Expr& target, const Value& v) {
    if (target.kind == K::name) {
      frames_.back()[target.name] = v;
    } else if (target.kind == K::attribute) {
      const std::string& name = target.args[0]->name;
      const Value ns = lookup(name);
      if (!ns.is_dict() || !ns.is_namespace)
        template_fail("line ", target.line, ": cannot assign attribute on non-namespace object '", name, "'");
      ns.dict->set(target.name, v);
    } else {
      if (!v.is_undefined() && !v.is_string() && !v.is_list() && !v.is_dict())
        template_fail("cannot unpack non-iterable ", type_name(v), " object");
      const List parts = iterate(v);
      const size_t n = target.args.size();
      if (parts.size() > n) template_fail("too many values to unpack (expected ", n, ")");
      if (parts.size() < n) template_fail("not enough values to unpack (expected ", n, ", got ", parts.size(), ")");
      for (size_t i = 0; i < n; ++i) bind(*target.args[i], parts[i]);
    }
  }

  // A for loop over its iterable; a recursive one's loop(items) renders the loop again over
  // items, a level deeper, in the scopes around the for tag.
  void exec_for(const Stmt& s) { loop_over(s, eval(*s.expr), 0); }

  void loop_over(const Stmt& s, const Value& iterable, int64_t depth) {
    auto recurse = std::make_shared<Function>([](const CallArgs&) -> Value {
      template_fail("The loop must have the 'recursive' marker to be called recursively.");
    });
    if (s.recursive)
      *recurse = [this, &s, scope = frames_, depth](const CallArgs& a) {
        if (a.positional.size() != 1 || !a.named.empty()) template_fail("loop() takes one argument, the items");
        return call_in_scope(scope, "the recursive loop", [&] { loop_over(s, a.positional[0], depth + 1); });
      };
    auto last_changed = std::make_shared<Value>();  // the arguments loop.changed() last saw (undefined: none yet)
    const Value changed = Value::from(Function([last_changed](const CallArgs& a) {
      const Value now = Value::tuple(a.positional);
      if (!last_changed->is_undefined() && equal(*last_changed, now)) return Value::from(false);
      *last_changed = now;
      return Value::from(true);
    }));
    List items;
    for (const Value& item : iterate(iterable)) {
      step();
      if (s.filter) {
        frames_.emplace_back();
        bind(*s.target, item);
        const bool keep = truthy(eval(*s.filter));
        frames_.pop_back();
        if (!keep) continue;
      }
      items.push_back(item);
    }
    if (items.empty()) {
      frames_.emplace_back();
      exec(s.else_body);
      frames_.pop_back();
      return;
    }
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      step();
      frames_.emplace_back();
      bind(*s.target, items[static_cast<size_t>(i)]);
      Dict loop;
      auto& fields = loop.items;  // each key once: no lookups
      fields.reserve(13);
      fields.emplace_back("index", Value::from(i + 1));
      fields.emplace_back("index0", Value::from(i));
      fields.emplace_back("revindex", Value::from(n - i));
      fields.emplace_back("revindex0", Value::from(n - i - 1));
      fields.emplace_back("first", Value::from(i == 0));
      fields.emplace_back("last", Value::from(i == n - 1));
      fields.emplace_back("length", Value::from(n));
      fields.emplace_back("depth", Value::from(depth + 1));
      fields.emplace_back("depth0", Value::from(depth));
      fields.emplace_back("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item"));
      fields.emplace_back("nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item"));
      fields.emplace_back("cycle", Value::from(Function([i](const CallArgs& a) {
                            if (a.positional.empty()) template_fail("no items for cycling given");
                            return a.positional[static_cast<size_t>(i) % a.positional.size()];
                          })));
      fields.emplace_back("changed", changed);
      Value loop_value = Value::from(std::move(loop));
      loop_value.function = recurse;  // loop(items): callable as jinja2's
      frames_.back()["loop"] = std::move(loop_value);
      const Flow flow = exec(s.body);
      frames_.pop_back();
      if (flow == Flow::break_) break;
    }
  }

  // The call arguments of a call/filter/test node, from args[skip] on, *args and **kwargs
  // spread as Python spreads them.
  CallArgs call_args(const Expr& e, size_t skip) {
    CallArgs a;
    for (size_t i = skip; i < e.args.size(); ++i) a.positional.push_back(eval(*e.args[i]));
    if (e.star_args) {
      const Value more = eval(*e.star_args);
      if (!more.is_undefined() && !more.is_string() && !more.is_list() && !more.is_dict())
        template_fail("Value after * must be an iterable, not ", type_name(more));
      for (Value& v : iterate(more)) a.positional.push_back(std::move(v));
    }
    for (const auto& [k, v] : e.named) a.named.emplace_back(k, eval(*v));
    if (e.star_kwargs) {
      const Value more = eval(*e.star_kwargs);
      if (!more.is_dict() || more.is_namespace)
        template_fail("argument after ** must be a mapping, not ", type_name(more));
      for (const auto& [k, v] : more.dict->items) {
        for (const auto& [given, x] : a.named)
          if (given == k) template_fail("got multiple values for keyword argument '", k, "'");
        a.named.emplace_back(k, v);
      }
    }
    return a;
  }

  bool compare(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return equal(a, b);
    if (op == "!=") return !equal(a, b);
    if (op == "<") return less(a, b);
    if (op == ">") return less(b, a);
    if (op == "<=") return equal(a, b) || less(a, b);
    if (op == ">=") return equal(a, b) || less(b, a);
    if (op == "in") return contains(b, a);
    return !contains(b, a);  // notin
  }

  Value eval(const Expr& e) {
    switch (e.kind) {
      case K::literal: return e.value;
      case K::name: return lookup(e.name);
      case K::list: {
        List items;
        for (const auto& x : e.args) items.push_back(eval(*x));
        return e.name == "tuple" ? Value::tuple(std::move(items)) : Value::from(std::move(items));
      }
      case K::dict: {
        Dict d;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          const Value key = eval(*e.args[i]);
          if (!key.is_string()) template_fail("line ", e.line, ": unsupported construct: a dict key of type ", type_name(key));
          d.set(key.text, eval(*e.args[i + 1]));
        }
        return Value::from(std::move(d));
      }
      case K::attribute: return get_attribute(eval(*e.args[0]), e.name);
      case K::item: return get_item(eval(*e.args[0]), eval(*e.args[1]));
      case K::slice: {
        auto part = [&](size_t i) { return e.args[i] ? eval(*e.args[i]) : Value::undefined(); };
        return get_slice(eval(*e.args[0]), part(1), part(2), part(3));
      }
      case K::call: {
        const Value callee = eval(*e.args[0]);
        return call_value(callee, call_args(e, 1), e.line);
      }
      case K::filter:  // an unknown one got past the parser only where jinja2 fails when running it
        if (!has_filter(e.name)) template_fail("No filter named '", e.name, "' found.");
        return apply_filter(e.name, eval(*e.args[0]), call_args(e, 1));
      case K::test:
        if (!has_test(e.name)) template_fail("No test named '", e.name, "' found.");
        return Value::from(apply_test(e.name, eval(*e.args[0]), call_args(e, 1)));
      case K::not_: return Value::from(!truthy(eval(*e.args[0])));
      case K::negate: return negate(eval(*e.args[0]));
      case K::plus: {
        Value v = eval(*e.args[0]);
        if (!v.is_number()) template_fail("bad operand type for unary +: '", type_name(v), "'");
        return v.kind == Value::Kind::boolean ? Value::from(static_cast<int64_t>(v.boolean)) : v;
      }
      case K::binary: return binary_op(e.name, eval(*e.args[0]), eval(*e.args[1]));
      case K::concat: {
        std::string s;
        for (const auto& x : e.args) s += str(eval(*x));
        return Value::from(s);
      }
      case K::compare: {
        Value left = eval(*e.args[0]);
        for (size_t i = 0; i < e.ops.size(); ++i) {
          Value right = eval(*e.args[i + 1]);
          if (!compare(e.ops[i], left, right)) return Value::from(false);
          left = std::move(right);
        }
        return Value::from(true);
      }
      case K::and_: {
        Value left = eval(*e.args[0]);
        return truthy(left) ? eval(*e.args[1]) : left;
      }
      case K::or_: {
        Value left = eval(*e.args[0]);
        return truthy(left) ? left : eval(*e.args[1]);
      }
      case K::conditional:
        if (truthy(eval(*e.args[0]))) return eval(*e.args[1]);
        return e.args[2] ? eval(*e.args[2]) : Value::undefined("the conditional expression had no else");
    }
    return Value::undefined();
  }

  static constexpr int kMaxMacroDepth = 200;  // a recursive macro stops here, not at a stack overflow
  std::vector<std::unordered_map<std::string, Value>> frames_;
  std::string out_;
  int64_t steps_ = 0;
  int macro_depth_ = 0;
};

}  // namespace

std::string render_body(const Body& body, const Dict& variables) { return Renderer(variables).run(body); }

}  // namespace difftx::chat
