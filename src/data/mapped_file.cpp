#include "data/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "io/input_file.h"

namespace difftx::data {

void Unmap::operator()(const unsigned char* p) const { ::munmap(const_cast<unsigned char*>(p), bytes); }

MappedFile::MappedFile(const std::filesystem::path& path) {
  struct stat st {};
  const int fd = io::open_regular_file(path, st);
  const size_t bytes = static_cast<size_t>(st.st_size);
  if (bytes > 0) {
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    DIFFTX_CHECK(p != MAP_FAILED, path.string(), ": mmap failed (", std::strerror(err), ")");
    map_ = {static_cast<const unsigned char*>(p), Unmap{bytes}};
  } else {
    ::close(fd);
  }
}

}  // namespace difftx::data
