#pragma once
// A small RAII layer over SQLite's C API (Debian's libsqlite3, linked dynamically): a connection, prepared
// statements and an immediate transaction that rolls back unless committed. Failures are Results naming the
// database file and SQLite's own message; nothing here knows kopt's schema (db/store.h does).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kopt::db {

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& o) noexcept;
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are numbered from 1, as in SQL's `?`. A failed bind is reported by the next step().
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind_null(int index);
  // true: a row is ready (read it with the column getters); false: the statement is done.
  Result<bool> step();
  // Steps to the end (an INSERT, UPDATE or DELETE).
  Status run();

  // Columns are numbered from 0.
  bool is_null(int column) const;
  std::string text(int column) const;  // "" for NULL
  int64_t integer(int column) const;
  double real(int column) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string bind_error_;  // the first failed bind, reported by step()
};

class Connection {
 public:
  // Opens (creating it and its folder when missing) a database file, waiting up to busy_timeout_ms for another
  // process's lock before a statement gives up.
  static Result<Connection> open(const std::filesystem::path& path, int busy_timeout_ms = 30000);
  Connection(Connection&& o) noexcept;
  Connection& operator=(Connection&& o) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  Status exec(const std::string& sql);  // one or more statements, no results
  Result<Statement> prepare(const std::string& sql);
  int64_t changes() const;  // rows changed by the last INSERT, UPDATE or DELETE
  int64_t last_insert_rowid() const;
  const std::filesystem::path& path() const { return path_; }
  // "PATH: MESSAGE (SQLite's message)" for the last failure on this connection.
  Error error(const std::string& what) const;

 private:
  Connection(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

// BEGIN IMMEDIATE: the write lock is taken at the start (waiting out another writer up to the busy timeout), so
// two writers never deadlock upgrading a read. Rolled back by the destructor unless commit() succeeded.
class Transaction {
 public:
  static Result<Transaction> begin(Connection& c);
  Transaction(Transaction&& o) noexcept : c_(o.c_), open_(o.open_) { o.open_ = false; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  Status commit();

 private:
  explicit Transaction(Connection& c) : c_(&c), open_(true) {}
  Connection* c_;
  bool open_;
};

}  // namespace kopt::db
