#include "db/sqlite.h"

#include <sqlite3.h>

#include <system_error>

namespace kopt::db {

namespace fs = std::filesystem;

Statement::Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_), bind_error_(std::move(o.bind_error_)) {
  o.stmt_ = nullptr;
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = o.stmt_;
    bind_error_ = std::move(o.bind_error_);
    o.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

namespace {
void note_bind(int rc, sqlite3* db, int index, std::string& first) {
  if (rc != SQLITE_OK && first.empty()) first = "binding parameter " + std::to_string(index) + ": " + sqlite3_errmsg(db);
}
}  // namespace

Statement& Statement::bind(int index, std::string_view text) {
  note_bind(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT), db_, index,
            bind_error_);
  return *this;
}

Statement& Statement::bind(int index, int64_t value) {
  note_bind(sqlite3_bind_int64(stmt_, index, value), db_, index, bind_error_);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  note_bind(sqlite3_bind_double(stmt_, index, value), db_, index, bind_error_);
  return *this;
}

Statement& Statement::bind_null(int index) {
  note_bind(sqlite3_bind_null(stmt_, index), db_, index, bind_error_);
  return *this;
}

Result<bool> Statement::step() {
  if (!bind_error_.empty()) return internal_error(bind_error_);
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return internal_error(std::string(sqlite3_errmsg(db_)) + " (" + sqlite3_errstr(rc) + ")");
}

Status Statement::run() {
  for (;;) {
    KOPT_TRY_ASSIGN(bool row, step());
    if (!row) return ok_status();
  }
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::string Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (!p) return "";
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }

Result<Connection> Connection::open(const fs::path& path, int busy_timeout_ms) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return input_error(path.string() + ": cannot create its folder (" + ec.message() + ")");
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    return input_error(path.string() + ": cannot open the results database (" + msg + ")");
  }
  Connection c(raw, path);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 1);
  return c;
}

Connection::Connection(Connection&& o) noexcept : db_(o.db_), path_(std::move(o.path_)) { o.db_ = nullptr; }

Connection& Connection::operator=(Connection&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = o.db_;
    path_ = std::move(o.path_);
    o.db_ = nullptr;
  }
  return *this;
}

Connection::~Connection() {
  if (db_) sqlite3_close_v2(db_);
}

Error Connection::error(const std::string& what) const {
  return internal_error(path_.string() + ": " + what + " (" + (db_ ? sqlite3_errmsg(db_) : "not open") + ")");
}

Status Connection::exec(const std::string& sql) {
  char* msg = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg);
  if (rc == SQLITE_OK) return ok_status();
  std::string text = msg ? msg : sqlite3_errstr(rc);
  sqlite3_free(msg);
  return internal_error(path_.string() + ": " + text + " (in: " + sql.substr(0, 80) + ")");
}

Result<Statement> Connection::prepare(const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK)
    return error("cannot prepare '" + sql.substr(0, 80) + "'");
  return Statement(db_, s);
}

int64_t Connection::changes() const { return sqlite3_changes64(db_); }
int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

Result<Transaction> Transaction::begin(Connection& c) {
  KOPT_TRY(c.exec("BEGIN IMMEDIATE"));
  return Transaction(c);
}

Transaction::~Transaction() {
  if (open_) (void)c_->exec("ROLLBACK");
}

Status Transaction::commit() {
  if (!open_) return internal_error("commit of a transaction that is not open");
  KOPT_TRY(c_->exec("COMMIT"));
  open_ = false;
  return ok_status();
}

}  // namespace kopt::db
