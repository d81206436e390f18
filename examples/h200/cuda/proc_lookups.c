/* Which driver entry points a program asks cuGetProcAddress for, and with which version
   (run L's probe of the static runtime's cudaDeviceReset, which no hook saw in run J).
   An LD_PRELOAD shim that only logs to stderr and forwards. The runtime finds the driver
   with dlopen + dlsym, so dlsym is wrapped too and hands out the logging versions.
     gcc -shared -fPIC -O1 -I/usr/local/cuda/include -o proc_lookups.so proc_lookups.c -ldl
     LD_PRELOAD=./proc_lookups.so ./program 2>lookups.txt */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#undef cuGetProcAddress
typedef CUresult (*v2_fn)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*v1_fn)(const char*, void**, int, cuuint64_t);
typedef CUresult (*table_fn)(const void**, const CUuuid*);

typedef void* (*dlsym_fn)(void*, const char*);
static dlsym_fn real_dlsym(void) {
  static dlsym_fn f;
  if (!f) f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!f) f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  return f;
}
static v2_fn next_v2;
static v1_fn next_v1;
static table_fn next_table;

CUresult cuGetProcAddress_v2(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
CUresult cuGetProcAddress(const char*, void**, int, cuuint64_t);
CUresult cuGetExportTable(const void**, const CUuuid*);
/* The runtime asks the driver for cuGetProcAddress itself: hand out the logging one. */
static void substitute(const char* symbol, void** pfn, int version, CUresult r) {
  if (r != CUDA_SUCCESS || !pfn || !*pfn) return;
  if (strcmp(symbol, "cuGetProcAddress") == 0) {
    if (version >= 12000) {
      next_v2 = (v2_fn)*pfn;
      *pfn = (void*)cuGetProcAddress_v2;
    } else {
      next_v1 = (v1_fn)*pfn;
      *pfn = (void*)cuGetProcAddress;
    }
  } else if (strcmp(symbol, "cuGetExportTable") == 0) {
    next_table = (table_fn)*pfn;
    *pfn = (void*)cuGetExportTable;
  }
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  v2_fn real = next_v2 ? next_v2 : (v2_fn)real_dlsym()(RTLD_NEXT, "cuGetProcAddress_v2");
  CUresult r = real(symbol, pfn, version, flags, status);
  fprintf(stderr, "lookup v2 %s version=%d flags=%llu -> %d\n", symbol, version, (unsigned long long)flags, (int)r);
  substitute(symbol, pfn, version, r);
  return r;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  v1_fn real = next_v1 ? next_v1 : (v1_fn)real_dlsym()(RTLD_NEXT, "cuGetProcAddress");
  CUresult r = real(symbol, pfn, version, flags);
  fprintf(stderr, "lookup v1 %s version=%d flags=%llu -> %d\n", symbol, version, (unsigned long long)flags, (int)r);
  substitute(symbol, pfn, version, r);
  return r;
}

CUresult cuGetExportTable(const void** table, const CUuuid* id) {
  table_fn real = next_table ? next_table : (table_fn)real_dlsym()(RTLD_NEXT, "cuGetExportTable");
  CUresult r = real(table, id);
  fprintf(stderr, "export table %02x%02x%02x%02x... -> %d\n", (unsigned char)id->bytes[0], (unsigned char)id->bytes[1],
          (unsigned char)id->bytes[2], (unsigned char)id->bytes[3], (int)r);
  return r;
}

void* dlsym(void* handle, const char* name) {
  void* p = real_dlsym()(handle, name);
  if (!p) return p;
  if (strcmp(name, "cuGetProcAddress_v2") == 0) {
    next_v2 = (v2_fn)p;
    return (void*)cuGetProcAddress_v2;
  }
  if (strcmp(name, "cuGetProcAddress") == 0) {
    next_v1 = (v1_fn)p;
    return (void*)cuGetProcAddress;
  }
  if (strcmp(name, "cuGetExportTable") == 0) {
    next_table = (table_fn)p;
    return (void*)cuGetExportTable;
  }
  if (strncmp(name, "cu", 2) == 0) fprintf(stderr, "dlsym %s\n", name);
  return p;
}
