#include "engine/timeline/flat_json_object.h"

#include "engine/system/bounded_json.h"

#include <limits>

#if KWB_HAVE_SIMDJSON
// Without exceptions a simdjson result cannot be used as its value, where it would throw on an
// error: every access must go through get() and check the error (the fuzzer found one that
// did not).
#define SIMDJSON_EXCEPTIONS 0
#include <simdjson.h>
#endif

namespace kwb::timeline {
namespace {

// A record line is well under a kilobyte; this only bounds what a damaged file can make us copy.
constexpr std::size_t kMaxLineBytes = 16u << 20;

} // namespace

bool simdjsonAvailable() {
    return KWB_HAVE_SIMDJSON != 0;
}

// Duplicate keys are not looked for here (a record line has none, and the scan cost more than
// the rest of the parse); find() reads from the back, so the later of two wins.
FlatJsonValue& FlatJsonObject::add(std::string_view key) {
    if (used_ == keys_.size()) {
        keys_.emplace_back();
        values_.emplace_back();
    }
    // Consecutive lines of a file have the same keys in the same order: mostly no copy.
    if (keys_[used_] != key)
        keys_[used_].assign(key);
    FlatJsonValue& value = values_[used_++];
    value.integers.clear();
    return value;
}

const FlatJsonValue* FlatJsonObject::find(std::string_view key) const {
    for (std::size_t i = used_; i-- > 0;)
        if (keys_[i] == key)
            return &values_[i];
    return nullptr;
}

bool FlatJsonObject::parse(std::string_view text, FlatJsonParser parser) {
    used_ = 0;
    if (text.size() > kMaxLineBytes)
        return false;
    const bool parsed = parser == FlatJsonParser::Fastest && simdjsonAvailable()
                            ? parseWithSimdjson(text)
                            : parseWithNlohmann(text);
    if (!parsed)
        used_ = 0;
    return parsed;
}

bool FlatJsonObject::parseWithNlohmann(std::string_view text) {
    using nlohmann::json;
    const json object = parseBoundedJson(text);
    if (!object.is_object())
        return false;
    for (const auto& [key, item] : object.items()) {
        FlatJsonValue& value = add(key);
        value.kind = FlatJsonValue::Kind::Other;
        if (item.is_number_unsigned()) {
            if (item.get<std::uint64_t>() <=
                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                value.kind = FlatJsonValue::Kind::Integer;
                value.integer = static_cast<std::int64_t>(item.get<std::uint64_t>());
            }
        } else if (item.is_number_integer()) {
            value.kind = FlatJsonValue::Kind::Integer;
            value.integer = item.get<std::int64_t>();
        } else if (item.is_string()) {
            value.kind = FlatJsonValue::Kind::String;
            value.text = item.get<std::string>();
        } else if (item.is_null()) {
            value.kind = FlatJsonValue::Kind::Null;
        } else if (item.is_boolean()) {
            value.kind = FlatJsonValue::Kind::Bool;
            value.integer = item.get<bool>() ? 1 : 0;
        } else if (item.is_array()) {
            value.kind = FlatJsonValue::Kind::IntegerArray;
            for (const json& element : item) {
                const bool fits =
                    element.is_number_unsigned()
                        ? element.get<std::uint64_t>() <=
                              static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                        : element.is_number_integer();
                if (!fits) {
                    value.kind = FlatJsonValue::Kind::Other;
                    value.integers.clear();
                    break;
                }
                value.integers.push_back(element.get<std::int64_t>());
            }
        }
    }
    return true;
}

#if KWB_HAVE_SIMDJSON
bool FlatJsonObject::parseWithSimdjson(std::string_view text) {
    namespace od = simdjson::ondemand;
    // One parser per thread: it owns buffers sized to the largest line seen, and is not
    // thread-safe. Loads on several threads each get their own.
    thread_local od::parser parser;
    padded_.assign(text);
    padded_.append(simdjson::SIMDJSON_PADDING, '\0');
    od::document document;
    if (parser.iterate(padded_.data(), text.size(), padded_.size()).get(document))
        return false;
    od::object object;
    if (document.get_object().get(object))
        return false;
    for (auto field : object) {
        std::string_view key;
        if (field.unescaped_key().get(key))
            return false;
        FlatJsonValue& value = add(key);
        value.kind = FlatJsonValue::Kind::Other;
        od::value item;
        if (field.value().get(item))
            return false;
        od::json_type type;
        if (item.type().get(type))
            return false;
        switch (type) {
        case od::json_type::number: {
            od::number_type numberType;
            if (item.get_number_type().get(numberType))
                return false;
            std::int64_t integer = 0;
            if (numberType != od::number_type::floating_point_number &&
                item.get_int64().get(integer) == simdjson::SUCCESS) {
                value.kind = FlatJsonValue::Kind::Integer;
                value.integer = integer;
            } else {
                double ignored = 0; // consumed, so that a malformed number is still an error
                if (numberType == od::number_type::floating_point_number &&
                    item.get_double().get(ignored))
                    return false;
            }
            break;
        }
        case od::json_type::string: {
            std::string_view string;
            if (item.get_string().get(string))
                return false;
            value.kind = FlatJsonValue::Kind::String;
            value.text.assign(string);
            break;
        }
        case od::json_type::null: {
            // Checked through get(): a result used as a bool throws on an error (a "nul" that
            // only starts like null), and the fuzzer found that in a second.
            bool isNull = false;
            if (item.is_null().get(isNull) || !isNull)
                return false;
            value.kind = FlatJsonValue::Kind::Null;
            break;
        }
        case od::json_type::boolean: {
            bool flag = false;
            if (item.get_bool().get(flag))
                return false;
            value.kind = FlatJsonValue::Kind::Bool;
            value.integer = flag ? 1 : 0;
            break;
        }
        case od::json_type::array: {
            od::array array;
            if (item.get_array().get(array))
                return false;
            bool integers = true;
            for (auto element : array) {
                od::value member;
                if (std::move(element).get(member))
                    return false;
                std::int64_t integer = 0;
                od::json_type memberType;
                if (member.type().get(memberType))
                    return false;
                if (memberType == od::json_type::number) {
                    od::number_type numberType;
                    if (member.get_number_type().get(numberType))
                        return false;
                    if (numberType != od::number_type::floating_point_number &&
                        member.get_int64().get(integer) == simdjson::SUCCESS) {
                        value.integers.push_back(integer);
                        continue;
                    }
                }
                integers = false; // the rest of the array is skipped by the object's iterator
                break;
            }
            value.kind = integers ? FlatJsonValue::Kind::IntegerArray : FlatJsonValue::Kind::Other;
            if (!integers)
                value.integers.clear();
            break;
        }
        case od::json_type::object: {
            // No record field is an object; a newer writer's may be. Skipped, but checked.
            od::object nested;
            std::string_view raw;
            if (item.get_object().get(nested) || nested.raw_json().get(raw))
                return false;
            break;
        }
        }
    }
    // Trailing text after the object ("{...} junk", two objects on a line) makes it malformed:
    // past the object, the document has no location left.
    const char* after = nullptr;
    return document.current_location().get(after) != simdjson::SUCCESS;
}
#else
bool FlatJsonObject::parseWithSimdjson(std::string_view text) {
    return parseWithNlohmann(text);
}
#endif

} // namespace kwb::timeline
