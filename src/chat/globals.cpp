#include "chat/globals.h"

#include <ctime>
#include <memory>
#include <utility>

#include "chat/access.h"
#include "chat/template_error.h"

namespace difftx::chat {
namespace {

std::tm the_time(const std::string& date) {
  std::tm tm{};
  if (date.empty()) {
    const std::time_t now = std::time(nullptr);
    localtime_r(&now, &tm);
    return tm;
  }
  int y = 0, m = 0, d = 0;
  char tail = 0;
  if (std::sscanf(date.c_str(), "%d-%d-%d%c", &y, &m, &d, &tail) != 3 || m < 1 || m > 12 || d < 1 || d > 31)
    template_fail("strftime_now: the date '", date, "' is not YYYY-MM-DD");
  tm.tm_year = y - 1900;
  tm.tm_mon = m - 1;
  tm.tm_mday = d;
  const std::time_t t = timegm(&tm);  // fills in the weekday and the day of the year
  gmtime_r(&t, &tm);
  return tm;
}

}  // namespace

void add_globals(Dict& variables, const std::string& date) {
  variables.set("raise_exception", Value::from(Function([](const CallArgs& a) -> Value {
                  const Value* message = argument(a, 0, "message");
                  throw RaisedError(message ? str(*message) : "");
                })));
  variables.set("strftime_now", Value::from(Function([date](const CallArgs& a) {
                  const auto format = string_argument(a, 0, "format");
                  if (!format) template_fail("strftime_now needs a format");
                  const std::tm tm = the_time(date);
                  char buf[512];
                  const size_t n = std::strftime(buf, sizeof buf, format->c_str(), &tm);
                  return Value::from(std::string(buf, n));
                })));
  auto keywords = [](const CallArgs& a, bool is_namespace) {
    Dict d;
    for (const Value& p : a.positional) {
      if (!p.is_dict()) template_fail(is_namespace ? "namespace" : "dict", "() takes a mapping as its argument");
      for (const auto& [k, v] : p.dict->items) d.set(k, v);
    }
    for (const auto& [k, v] : a.named) d.set(k, v);
    Value out = Value::from(std::move(d));
    out.is_namespace = is_namespace;
    return out;
  };
  variables.set("namespace", Value::from(Function([keywords](const CallArgs& a) { return keywords(a, true); })));
  variables.set("dict", Value::from(Function([keywords](const CallArgs& a) { return keywords(a, false); })));
  // joiner(sep=', '): a function that returns '' the first time and sep after.
  variables.set("joiner", Value::from(Function([](const CallArgs& a) {
                  const std::string sep = string_argument(a, 0, "sep").value_or(", ");
                  auto used = std::make_shared<bool>(false);
                  return Value::from(Function([sep, used](const CallArgs&) {
                    return Value::from(std::exchange(*used, true) ? sep : std::string());
                  }));
                })));
  // cycler(a, b, ...): .next() returns the items in turn, .current the one it returns next,
  // .reset() starts again (an object whose attributes change: a namespace here).
  variables.set("cycler", Value::from(Function([](const CallArgs& a) {
                  if (a.positional.empty()) template_fail("at least one item has to be provided");
                  Value cycler = Value::from(Dict{});
                  cycler.is_namespace = true;
                  const std::weak_ptr<Dict> self = cycler.dict;
                  const List items = a.positional;
                  auto pos = std::make_shared<size_t>(0);
                  auto move_to = [self, items, pos](size_t at) {
                    *pos = at % items.size();
                    if (const auto d = self.lock()) d->set("current", items[*pos]);
                  };
                  cycler.dict->set("items", Value::tuple(items));
                  cycler.dict->set("current", items[0]);
                  cycler.dict->set("next", Value::from(Function([items, pos, move_to](const CallArgs&) {
                                     const Value now = items[*pos];
                                     move_to(*pos + 1);
                                     return now;
                                   })));
                  cycler.dict->set("reset", Value::from(Function([move_to](const CallArgs&) {
                                     move_to(0);
                                     return Value::none();
                                   })));
                  return cycler;
                })));
  variables.set("range", Value::from(Function([](const CallArgs& a) {
                  const size_t n = a.positional.size();
                  if (n < 1 || n > 3) template_fail("range expected 1 to 3 arguments, got ", n);
                  const int64_t start = n == 1 ? 0 : int_argument(a, 0, "start", 0);
                  const int64_t stop = int_argument(a, n == 1 ? 0 : 1, "stop", 0);
                  const int64_t step = n == 3 ? int_argument(a, 2, "step", 1) : 1;
                  if (step == 0) template_fail("range() arg 3 must not be zero");
                  List out;
                  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
                    if (out.size() >= 100000) template_fail("range too big (at most 100000 items)");
                    out.push_back(Value::from(i));
                  }
                  return Value::from(std::move(out));
                })));
}

}  // namespace difftx::chat
