#include "agent/store/sqlite_database.h"

#include <sqlite3.h>

namespace kwb::agent::sqlite {

namespace {

[[noreturn]] void throwFor(sqlite3* db, int code, std::string_view what) {
    std::string message(what);
    if (!message.empty())
        message += ": ";
    // sqlite3_errstr, not errmsg, when there is no handle or the handle describes another call.
    message += db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
    throw Error(code, message);
}

void check(sqlite3_stmt* statement, int code, std::string_view what) {
    if (code != SQLITE_OK)
        throwFor(sqlite3_db_handle(statement), code, what);
}

} // namespace

bool Error::busy() const {
    const int primary = code_ & 0xff;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

Query::~Query() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
}

Query& Query::bind(int index, std::int64_t value) {
    check(statement_, sqlite3_bind_int64(statement_, index, value), "binding a value");
    return *this;
}

Query& Query::bind(int index, double value) {
    check(statement_, sqlite3_bind_double(statement_, index, value), "binding a value");
    return *this;
}

Query& Query::bind(int index, std::string_view text) {
    check(statement_,
          sqlite3_bind_text64(statement_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                              SQLITE_UTF8),
          "binding a value");
    return *this;
}

Query& Query::bind(int index, std::optional<std::int64_t> value) {
    return value ? bind(index, *value) : bindNull(index);
}

Query& Query::bind(int index, std::optional<double> value) {
    return value ? bind(index, *value) : bindNull(index);
}

Query& Query::bindNull(int index) {
    check(statement_, sqlite3_bind_null(statement_, index), "binding a value");
    return *this;
}

bool Query::step() {
    const int code = sqlite3_step(statement_);
    if (code == SQLITE_ROW)
        return true;
    if (code == SQLITE_DONE)
        return false;
    // SQLite's own words ("database disk image is malformed") are the message; the store
    // prefixes what it was doing.
    throwFor(sqlite3_db_handle(statement_), code, "");
}

void Query::run() {
    while (step()) {
    }
}

bool Query::isNull(int column) const {
    return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

std::int64_t Query::integer(int column) const {
    return sqlite3_column_int64(statement_, column);
}

std::optional<std::int64_t> Query::optionalInteger(int column) const {
    return isNull(column) ? std::nullopt : std::optional(integer(column));
}

double Query::real(int column) const {
    return sqlite3_column_double(statement_, column);
}

std::optional<double> Query::optionalReal(int column) const {
    return isNull(column) ? std::nullopt : std::optional(real(column));
}

std::string Query::text(int column) const {
    const auto* data = sqlite3_column_text(statement_, column);
    if (!data)
        return {};
    return std::string(reinterpret_cast<const char*>(data),
                       static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)));
}

Database::Database(const std::string& path, bool create) {
    // NOMUTEX: the store serialises every call on its own mutex, so SQLite's would be redundant.
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (create)
        flags |= SQLITE_OPEN_CREATE;
    const int code = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    if (code != SQLITE_OK) {
        std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
        sqlite3_close(db_);
        db_ = nullptr;
        throw Error(code, message);
    }
    sqlite3_extended_result_codes(db_, 1);
}

Database::~Database() {
    for (auto& [sql, statement] : statements_)
        sqlite3_finalize(statement);
    sqlite3_close(db_);
}

void Database::exec(const std::string& sql) {
    char* message = nullptr;
    const int code = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    if (code == SQLITE_OK)
        return;
    const std::string text = message ? message : sqlite3_errstr(code);
    sqlite3_free(message);
    throw Error(sqlite3_extended_errcode(db_), text);
}

Query Database::query(const std::string& sql) {
    auto it = statements_.find(sql);
    if (it == statements_.end()) {
        sqlite3_stmt* statement = nullptr;
        const int code = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                                            SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
        if (code != SQLITE_OK)
            fail(code, "preparing a statement");
        it = statements_.emplace(sql, statement).first;
    }
    return Query(it->second);
}

std::int64_t Database::pragmaInteger(const std::string& name) {
    Query pragma = query("PRAGMA " + name);
    return pragma.step() ? pragma.integer(0) : 0;
}

std::int64_t Database::changes() const {
    return sqlite3_changes64(db_);
}

std::int64_t Database::lastInsertId() const {
    return sqlite3_last_insert_rowid(db_);
}

void Database::setBusyTimeout(std::chrono::milliseconds timeout) {
    sqlite3_busy_timeout(db_, static_cast<int>(timeout.count()));
}

void Database::fail(int code, std::string_view what) const {
    throwFor(db_, code, what);
}

Transaction::Transaction(Database& db, Mode mode) : db_(db) {
    db_.exec(mode == Mode::Write ? "BEGIN IMMEDIATE" : "BEGIN");
}

Transaction::~Transaction() {
    if (!open_)
        return;
    try {
        db_.exec("ROLLBACK");
    } catch (const Error&) {
        // SQLite has already rolled back after some errors (SQLITE_FULL, SQLITE_IOERR, ...),
        // and then ROLLBACK itself fails; either way nothing of this transaction remains.
    }
}

void Transaction::commit() {
    db_.exec("COMMIT");
    open_ = false;
}

} // namespace kwb::agent::sqlite
