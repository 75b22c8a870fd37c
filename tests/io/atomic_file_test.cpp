#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/io_test_files.h"

namespace difftx::io {
namespace {

using testing::error_message;
using testing::expect_contains;
using testing::TempDir;
using testing::write_bytes;

std::vector<std::string> entries(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFile, ReplacesTheTargetAndLeavesNothingElse) {
  TempDir dir;
  write_file_atomically(dir / "f.txt", "first");
  EXPECT_EQ(read_whole_file(dir / "f.txt"), "first");
  write_file_atomically(dir / "f.txt", "second, longer");
  EXPECT_EQ(read_whole_file(dir / "f.txt"), "second, longer");
  write_file_atomically(dir / "f.txt", "");
  EXPECT_EQ(read_whole_file(dir / "f.txt"), "");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"f.txt"});
}

TEST(AtomicFile, NewFilesGetTheUmaskModeNotAPrivateTemporaryMode) {
  TempDir dir;
  const mode_t mask = ::umask(022);
  write_file_atomically(dir / "f.txt", "x");
  ::umask(mask);
  EXPECT_EQ(std::filesystem::status(dir / "f.txt").permissions(),
            static_cast<std::filesystem::perms>(0644));
}

TEST(AtomicFile, StreamingWriterShowsNothingUntilCommit) {
  TempDir dir;
  write_bytes(dir / "f.bin", "old");
  AtomicFileWriter writer(dir / "f.bin");
  EXPECT_EQ(writer.temporary().parent_path(), dir.path()) << "same directory, so rename is atomic";
  writer.write("new ");
  writer.write(std::string(1 << 20, 'x'));
  EXPECT_EQ(read_whole_file(dir / "f.bin"), "old");
  writer.commit();
  EXPECT_EQ(read_whole_file(dir / "f.bin"), "new " + std::string(1 << 20, 'x'));
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"f.bin"});
  expect_contains(error_message([&] { writer.write("more"); }), "already committed");
}

// A producer that fails half-way (here by throwing) abandons the writer: the destructor must
// remove the temporary file and leave the old target as it was.
TEST(AtomicFile, AbandonedWriterKeepsTheOldFileAndRemovesItsTemporary) {
  TempDir dir;
  write_bytes(dir / "ckpt", "old checkpoint");
  EXPECT_THROW(
      {
        AtomicFileWriter writer(dir / "ckpt");
        writer.write("half of a new checkp");
        EXPECT_EQ(entries(dir.path()).size(), 2u) << "the temporary exists while writing";
        fail("producer failed");
      },
      Error);
  EXPECT_EQ(read_whole_file(dir / "ckpt"), "old checkpoint");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"ckpt"});
}

// A write that the system refuses (file size limit: EFBIG, as a full disk gives ENOSPC).
TEST(AtomicFile, FailingWriteKeepsTheOldFileAndRemovesItsTemporary) {
  TempDir dir;
  write_bytes(dir / "big", "old");
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto saved_handler = ::signal(SIGXFSZ, SIG_IGN);  // get EFBIG instead of a signal
  rlimit small = saved;
  small.rlim_cur = 1 << 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string message = error_message([&] { write_file_atomically(dir / "big", std::string(1 << 18, 'x')); });
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, saved_handler);
  expect_contains(message, "cannot write '" + (dir / "big").string() + "': File too large");
  expect_contains(message, "previous file, if any, is unchanged");
  EXPECT_EQ(read_whole_file(dir / "big"), "old");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"big"});
}

TEST(AtomicFile, FailingRenameRemovesItsTemporary) {
  TempDir dir;
  std::filesystem::create_directories(dir / "target" / "inside");  // rename over a directory fails
  const std::string message = error_message([&] { write_file_atomically(dir / "target", "x"); });
  expect_contains(message, "rename failed");
  EXPECT_TRUE(std::filesystem::is_directory(dir / "target" / "inside"));
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"target"});
}

TEST(AtomicFile, MissingDirectoryIsAClearError) {
  TempDir dir;
  expect_contains(error_message([&] { write_file_atomically(dir / "no" / "such" / "f", "x"); }),
                  "cannot write '" + (dir / "no" / "such" / "f").string() + "': cannot create a temporary file");
}

TEST(AtomicFile, UnwritableDirectoryKeepsTheOldFile) {
  TempDir dir;
  write_bytes(dir / "f", "old");
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  if (::access(dir.path().c_str(), W_OK) == 0) {
    std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all);
    GTEST_SKIP() << "this process may write anywhere (root): directory permissions cannot stop it";
  }
  const std::string message = error_message([&] { write_file_atomically(dir / "f", "new"); });
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all);
  expect_contains(message, "Permission denied");
  EXPECT_EQ(read_whole_file(dir / "f"), "old");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"f"});
}

TEST(AtomicFile, BareFileNameWritesInTheCurrentDirectory) {
  TempDir dir;
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const std::string message = error_message([] { write_file_atomically("bare.txt", "here"); });
  std::filesystem::current_path(cwd);
  EXPECT_EQ(message, "");
  EXPECT_EQ(read_whole_file(dir / "bare.txt"), "here");
}

}  // namespace
}  // namespace difftx::io
