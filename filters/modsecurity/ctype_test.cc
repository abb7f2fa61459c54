// ctype_inline.cc against glibc: for every byte value (as char and as
// unsigned char) and EOF, in the "C" locale and in C.UTF-8, the module's
// ctype functions answer as glibc's do (the is* ones for truth).

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <clocale>
#include <cstdio>

extern "C" {
int tolower(int) noexcept;
int toupper(int) noexcept;
int isspace(int) noexcept;
int isxdigit(int) noexcept;
int isalnum(int) noexcept;
}

namespace {

using Fn = int (*)(int);

struct Pair {
  const char* name;
  Fn ours;
  bool truth;  // compare for truth (is*) rather than value (to*)
};

// The test binary links ctype_inline.o, so the names bind to the module's
// definitions; RTLD_NEXT finds the next definition, glibc's.
Fn Glibc(const char* name) {
  void* sym = dlsym(RTLD_NEXT, name);
  if (sym == nullptr) {
    ADD_FAILURE() << "dlsym(RTLD_NEXT, " << name << "): " << dlerror();
  }
  return reinterpret_cast<Fn>(sym);
}

TEST(CtypeInline, AgreesWithGlibc) {
  const Pair pairs[] = {{"tolower", &::tolower, false},
                        {"toupper", &::toupper, false},
                        {"isspace", &::isspace, true},
                        {"isxdigit", &::isxdigit, true},
                        {"isalnum", &::isalnum, true}};
  for (const char* locale : {"C", "C.UTF-8"}) {
    ASSERT_NE(std::setlocale(LC_ALL, locale), nullptr) << locale;
    for (const Pair& p : pairs) {
      Fn glibc = Glibc(p.name);
      ASSERT_NE(glibc, nullptr);
      ASSERT_NE(glibc, p.ours) << p.name << ": the test would compare glibc with itself";
      for (int c = -128; c <= 255; c++) {
        int want = glibc(c), got = p.ours(c);
        if (p.truth) {
          EXPECT_EQ(got != 0, want != 0) << locale << " " << p.name << "(" << c << ")";
        } else {
          EXPECT_EQ(got, want) << locale << " " << p.name << "(" << c << ")";
        }
      }
      EXPECT_EQ(p.ours(EOF) != 0, glibc(EOF) != 0) << locale << " " << p.name << "(EOF)";
    }
  }
  std::setlocale(LC_ALL, "C");
}

}  // namespace
