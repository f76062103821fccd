# formats/: libdtcap.a (every formats/*.c).  Owned by the formats work.
CAP_LIB_SRCS := $(wildcard formats/*.c)
CAP_LIB := $(B)/libdtcap.a
CAP_LIB_ASAN := $(B)/asan/libdtcap.a
$(CAP_LIB): $(CAP_LIB_SRCS:%.c=$(B)/obj/%.o)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(CAP_LIB_ASAN): $(CAP_LIB_SRCS:%.c=$(B)/asan/obj/%.o)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
