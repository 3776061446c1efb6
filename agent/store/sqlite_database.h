#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

// A thin RAII layer over the sqlite3 C API for the trajectory store. It throws
// sqlite::Error; the store catches it at its public API and turns it into a StoreError, so
// nothing here escapes to callers. Not thread-safe: its owner serialises access.
namespace kwb::agent::sqlite {

class Error : public std::runtime_error {
public:
    Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
    int code() const { return code_; }
    // Another connection holds the lock: worth retrying the whole transaction.
    bool busy() const;

private:
    int code_;
};

// A cached prepared statement, borrowed for one use. It is reset and its bindings cleared
// when the borrow ends, so no read snapshot outlives the call that took it.
class Query {
public:
    explicit Query(sqlite3_stmt* statement) : statement_(statement) {}
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;
    ~Query();

    Query& bind(int index, std::int64_t value);
    Query& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
    Query& bind(int index, double value);
    Query& bind(int index, std::string_view text);
    Query& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
    Query& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
    Query& bind(int index, std::optional<std::int64_t> value);
    Query& bind(int index, std::optional<double> value);
    Query& bindNull(int index);

    bool step(); // true: a row is ready; false: done
    void run();  // steps to the end, for statements that return no rows

    bool isNull(int column) const;
    std::int64_t integer(int column) const;
    std::optional<std::int64_t> optionalInteger(int column) const;
    double real(int column) const;
    std::optional<double> optionalReal(int column) const;
    std::string text(int column) const; // NULL reads as ""

private:
    sqlite3_stmt* statement_;
};

class Database {
public:
    // Opens (creating when allowed) the file, or ":memory:". Throws Error when it cannot.
    Database(const std::string& path, bool create);
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    void exec(const std::string& sql);
    Query query(const std::string& sql); // prepared once, then reused
    std::int64_t pragmaInteger(const std::string& name);
    std::int64_t changes() const;
    std::int64_t lastInsertId() const;
    void setBusyTimeout(std::chrono::milliseconds timeout);

    [[noreturn]] void fail(int code, std::string_view what) const;

private:
    sqlite3* db_ = nullptr;
    std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back unless committed. IMMEDIATE takes the write lock up
// front: a read transaction that later upgrades can fail with SQLITE_BUSY without waiting,
// which the busy timeout cannot help with.
class Transaction {
public:
    enum class Mode { Write, Read };
    explicit Transaction(Database& db, Mode mode = Mode::Write);
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();
    void commit();

private:
    Database& db_;
    bool open_ = true;
};

} // namespace kwb::agent::sqlite
