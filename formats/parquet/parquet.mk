# formats/parquet: libdtpq.a, the streaming Parquet writer.  A file format
# of its own, beside libdtcap and depending on nothing of cli/ (its one
# shared rule, UTF-8 text, is include/dt_utf8.h): dtreport's export is
# its user, tests/export's pqgen and pqbits drive it alone.
PQ_LIB_SRCS := $(wildcard formats/parquet/*.c)
PQ_LIB := $(B)/libdtpq.a
PQ_LIB_ASAN := $(B)/asan/libdtpq.a
# its users include "parquet.h"
CFLAGS_INC += -I$(TOP)/formats/parquet
ALL += $(PQ_LIB) $(PQ_LIB_ASAN)

$(PQ_LIB): $(PQ_LIB_SRCS:%.c=$(B)/obj/%.o)
	$(ARCHIVE)
$(PQ_LIB_ASAN): $(PQ_LIB_SRCS:%.c=$(B)/asan/obj/%.o)
	$(ARCHIVE)

# The writer's loops (copy and range, dictionary marks and lookups) have
# trip counts known only at run time: -O2's very-cheap cost model leaves
# them scalar, -O3's model vectorizes them (VECT_DYNAMIC, the top Makefile).
$(B)/obj/formats/parquet/parquet.o: CFLAGS += $(VECT_DYNAMIC)
