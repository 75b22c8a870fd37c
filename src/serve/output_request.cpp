#include "serve/output_request.h"

#include <algorithm>
#include <set>

#include "serve/api_error.h"
#include "serve/json_fields.h"
#include "serve/request_parse.h"

namespace difftx::serve {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

template <class Json>
void only_keys(const Json& object, const std::set<std::string>& keys, const std::string& param,
               const std::string& what) {
  for (const auto& [key, _] : object.items())
    if (!keys.count(key)) bad_param(param, what + " has an unknown field '" + key + "'");
}

// A function's parameters as the grammar takes them: its arguments are an object (OpenAI's rule),
// so the root says "type": "object", or says no type and combines no schemas (taken as an object's).
ordered_json object_parameters(ordered_json parameters, const std::string& at) {
  const auto type = parameters.find("type");
  if (type == parameters.end()) {
    for (const char* key : {"$ref", "anyOf", "oneOf", "allOf", "enum", "const"})
      if (parameters.contains(key))
        bad_param("tools", at + ".function.parameters must say \"type\": \"object\" at its root, beside '" + key + "'");
    parameters["type"] = "object";
  } else if (*type != "object" && *type != ordered_json::array({"object"})) {
    bad_param("tools", at + ".function.parameters must be of \"type\": \"object\" (the arguments are an object), not " +
                           type->dump());
  }
  return parameters;
}

// A JSON Schema given as an object, or as the JSON text of one (vLLM takes both).
ordered_json schema_value(const ordered_json& v, const std::string& field) {
  if (v.is_object()) return v;
  if (v.is_string()) try {
      ordered_json parsed = parse_request_json_text(v.get_ref<const std::string&>(), field);
      if (parsed.is_object()) return parsed;
    } catch (const Error&) {
    }
  bad_param(field, "'" + field + "' must be a JSON Schema: an object, or the JSON text of one");
}

std::string nonempty_string(const json& v, const std::string& field, const std::string& what) {
  if (!v.is_string() || v.get<std::string>().empty()) bad_param(field, "'" + field + "' must be a non-empty string " + what);
  return v.get<std::string>();
}

std::vector<std::string> choices(const json& v, const std::string& field) {
  if (!v.is_array() || v.empty() || static_cast<int64_t>(v.size()) > kMaxChoices)
    bad_param(field, concat("'", field, "' must be a list of 1 to ", kMaxChoices, " strings"));
  std::vector<std::string> out;
  for (const json& c : v) {
    if (!c.is_string()) bad_param(field, "'" + field + "' must hold strings only, not " + json_type_name(c));
    out.push_back(c.get<std::string>());
  }
  return out;
}

// One constraint of a kind (json: a schema, regex, choice, grammar) given in `field`; `ordered` is
// the same value with its keys in the order written.
void read_constraint(std::string_view kind, const json& v, const ordered_json& ordered, const std::string& field,
                     OutputRequest& out) {
  if (kind == "json") out.schema = schema_value(ordered, field);
  if (kind == "regex") out.regex = nonempty_string(v, field, "(a regular expression)");
  if (kind == "choice") out.choice = choices(v, field);
  if (kind == "grammar") out.grammar = nonempty_string(v, field, "of GBNF rules");
}

// vLLM's structured_outputs: exactly one of its constraints.
void read_structured_outputs(const json& v, const ordered_json& ordered, OutputRequest& out) {
  const std::string field = "structured_outputs";
  if (!v.is_object()) bad_param(field, "'structured_outputs' must be an object");
  only_keys(v, {"json", "regex", "choice", "grammar", "json_object"}, field, "'structured_outputs'");
  std::vector<std::string> given;
  for (const auto& [key, value] : v.items())
    if (!value.is_null() && !(key == "json_object" && value == false)) given.push_back(key);
  if (given.size() != 1)
    bad_param(field, "'structured_outputs' must give exactly one of json, regex, choice, grammar, json_object");
  const std::string& key = given[0];
  const std::string at = field + "." + key;
  out.format_field = at;  // where the constraint's errors point
  read_constraint(key, v[key], ordered[field][key], at, out);
  if (key == "json_object") {
    if (v[key] != true) bad_param(field, "'structured_outputs.json_object' must be a boolean");
    out.schema = ordered_json{{"type", "object"}};
  }
}

}  // namespace

void parse_output_format(const json& body, const ordered_json& ordered, OutputRequest& out) {
  const Fields f(body);
  std::string given;  // the field a constraint came from
  const auto constraint = [&](const std::string& field) {
    if (!given.empty())
      bad_param(field, "'" + field + "' and '" + given + "' cannot both be given: a request has one output constraint");
    given = out.format_field = field;
  };
  if (const json* v = f.find("response_format")) {
    if (!v->is_object() || !v->contains("type") || !(*v)["type"].is_string())
      bad_param("response_format", "'response_format' must be an object with a 'type'");
    const std::string type = (*v)["type"];
    if (type == "json_object") {  // with llama-server's `schema`, a document of that schema
      only_keys(*v, {"type", "schema"}, "response_format", "'response_format'");
      constraint("response_format");
      const ordered_json& given = ordered["response_format"];
      out.schema = given.contains("schema") && !given["schema"].is_null() ? given["schema"]
                                                                          : ordered_json{{"type", "object"}};
    } else if (type == "json_schema") {
      only_keys(*v, {"type", "json_schema"}, "response_format", "'response_format'");
      const auto it = v->find("json_schema");
      if (it == v->end() || !it->is_object())
        bad_param("response_format", "'response_format' of type json_schema needs a 'json_schema' object");
      only_keys(*it, {"name", "schema", "strict", "description"}, "response_format", "'json_schema'");
      // Required, in the shape OpenAI allows a function's name (it refuses the request otherwise).
      const std::string name_field = "response_format.json_schema.name";
      if (!it->contains("name") || (*it)["name"].is_null())
        missing_param(name_field);
      if (!(*it)["name"].is_string() || !valid_function_name((*it)["name"].get<std::string>()))
        bad_param(name_field, "'" + name_field + "' must be 1 to 64 letters, digits, '_' or '-'");
      if (it->contains("strict") && !(*it)["strict"].is_boolean() && !(*it)["strict"].is_null())
        bad_param("response_format", "'json_schema.strict' must be a boolean");
      constraint("response_format");
      const ordered_json& given_schema = ordered["response_format"]["json_schema"];
      out.schema = given_schema.contains("schema") && !given_schema["schema"].is_null() ? given_schema["schema"]
                                                                                       : ordered_json::object();
    } else if (type != "text") {
      bad_param("response_format",
                "'response_format' type must be text, json_object or json_schema, not '" + type + "'");
    }
  }
  // The others, each a constraint of one kind: GBNF `grammar`, llama.cpp's `json_schema`, vLLM's
  // fields (structured_outputs: the kind is its key).
  constexpr std::pair<const char*, const char*> kFields[] = {
      {"grammar", "grammar"},          {"json_schema", "json"},   {"structured_outputs", nullptr},
      {"guided_json", "json"},         {"guided_regex", "regex"}, {"guided_choice", "choice"},
      {"guided_grammar", "grammar"}};
  for (const auto& [field, kind] : kFields) {
    const json* v = f.find(field);
    if (!v) continue;
    constraint(field);
    if (kind) read_constraint(kind, *v, ordered[field], field, out);
    else read_structured_outputs(*v, ordered, out);
  }
}

void parse_tools(const json& body, const ordered_json& ordered, OutputRequest& out) {
  const Fields f(body);
  if (const json* v = f.find("tools")) {
    if (!v->is_array()) bad_param("tools", "'tools' must be a list");
    if (static_cast<int64_t>(v->size()) > kMaxTools)
      bad_param("tools", concat("'tools' holds ", v->size(), " tools; at most ", kMaxTools, " are supported"));
    std::set<std::string> names;
    for (size_t i = 0; i < v->size(); ++i) {
      const json& tool = (*v)[i];
      const std::string at = concat("tools[", i, "]");
      if (!tool.is_object() || tool.value("type", json()) != "function" || !tool.contains("function") ||
          !tool["function"].is_object())
        bad_param("tools", at + " must be {\"type\": \"function\", \"function\": {...}}");
      only_keys(tool, {"type", "function"}, "tools", at);
      const json& fn = tool["function"];
      only_keys(fn, {"name", "description", "parameters", "strict"}, "tools", at + ".function");
      if (!fn.contains("name") || !fn["name"].is_string() || !valid_function_name(fn["name"].get<std::string>()))
        bad_param("tools", at + ".function.name must be 1 to 64 letters, digits, '_' or '-'");
      const std::string name = fn["name"];
      if (!names.insert(name).second) bad_param("tools", "two tools are named '" + name + "'");
      if (fn.contains("description") && !fn["description"].is_string() && !fn["description"].is_null())
        bad_param("tools", at + ".function.description must be a string");
      if (fn.contains("strict") && !fn["strict"].is_boolean() && !fn["strict"].is_null())
        bad_param("tools", at + ".function.strict must be a boolean");
      ordered_json parameters = {
          {"type", "object"}, {"properties", ordered_json::object()}, {"additionalProperties", false}};
      if (fn.contains("parameters") && !fn["parameters"].is_null()) {
        if (!fn["parameters"].is_object()) bad_param("tools", at + ".function.parameters must be a JSON Schema object");
        parameters = object_parameters(ordered["tools"][i]["function"]["parameters"], at);
      }
      out.functions.push_back({name, parameters});
    }
    if (!v->empty()) out.tools = ordered["tools"];
  }
  if (const json* v = f.find("tool_choice")) {
    if (v->is_string()) {
      const std::string c = *v;
      if (c == "none") out.tool_choice = ToolChoice::none;
      else if (c == "auto") out.tool_choice = ToolChoice::automatic;
      else if (c == "required") out.tool_choice = ToolChoice::required;
      else
        bad_param("tool_choice",
                  "'tool_choice' must be none, auto, required or {\"type\": \"function\", ...}, not '" + c + "'");
    } else if (v->is_object() && v->value("type", json()) == "function" && v->contains("function") &&
               (*v)["function"].is_object() && (*v)["function"].contains("name") &&
               (*v)["function"]["name"].is_string()) {
      const std::string name = (*v)["function"]["name"];
      const bool listed = std::any_of(out.functions.begin(), out.functions.end(),
                                      [&](const ToolFunction& t) { return t.name == name; });
      if (!listed)
        bad_param("tool_choice", "'tool_choice' names the function '" + name + "', which 'tools' does not list");
      out.tool_choice = ToolChoice::required;
      out.named_function = name;
    } else {
      bad_param(
          "tool_choice",
          "'tool_choice' must be none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    if (out.tool_choice == ToolChoice::required && out.functions.empty())
      bad_param("tool_choice", "'tool_choice' asks for a tool call, but no 'tools' are given");
  }
  if (const auto p = f.boolean("parallel_tool_calls")) out.parallel_tool_calls = *p;
  if (const auto m = f.integer("max_reasoning_tokens", 0, INT32_MAX)) out.max_reasoning_tokens = m;
}

ordered_json checked_tool_calls(const ordered_json& calls) {
  if (!calls.is_array()) bad_param("messages", "a message's 'tool_calls' must be a list");
  ordered_json out = ordered_json::array();
  for (const ordered_json& call : calls) {
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object())
      bad_param(
          "messages",
          "each of 'tool_calls' must be {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}");
    if (call.contains("type") && call["type"] != "function")
      bad_param("messages", "a tool call's 'type' must be 'function'");
    if (call.contains("id") && !call["id"].is_string()) bad_param("messages", "a tool call's 'id' must be a string");
    const ordered_json& fn = call["function"];
    if (!fn.contains("name") || !fn["name"].is_string())
      bad_param("messages", "a tool call's function needs a string 'name'");
    ordered_json converted = call;
    if (!fn.contains("arguments") || fn["arguments"].is_null() || fn["arguments"] == "") {
      converted["function"]["arguments"] = ordered_json::object();  // a call without arguments, as vLLM reads it
    } else if (fn["arguments"].is_string()) {
      try {
        converted["function"]["arguments"] = parse_request_json_text(fn["arguments"].get<std::string>(), "arguments");
      } catch (const Error& e) {
        bad_param("messages", std::string("a tool call's 'arguments' must be JSON text: ") + e.what());
      }
    } else if (!fn["arguments"].is_object()) {
      bad_param("messages", "a tool call's 'arguments' must be a JSON string");
    }
    out.push_back(std::move(converted));
  }
  return out;
}

}  // namespace difftx::serve
