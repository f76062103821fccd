# cli/dtsh: the interactive shell.  Links libdtcli (recording, report
# commands, SQL) and libdtcap like the other tools.  The static build is for
# the VM guest: libedit's static archive needs libtinfo, libbsd and libmd.
DTSH_SRCS := $(wildcard cli/dtsh/*.c)
DTSH_OBJS := $(DTSH_SRCS:%.c=$(B)/obj/%.o)
DTSH_OBJS_ASAN := $(DTSH_SRCS:%.c=$(B)/asan/obj/%.o)
DTSH_STATIC_LIBS := -lsqlite3 -liberty -ledit -ltinfo -lbsd -lmd $(LDLIBS_DW_STATIC) -lcapstone -lxxhash -lpthread -lm -ldl

$(B)/bin/dtsh: $(DTSH_OBJS) $(CLI_LIB) $(PQ_LIB) $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $(DTSH_OBJS) $(CLI_LIB) $(PQ_LIB) $(CAP_LIB) $(LDLIBS_ALL)
$(B)/asan/bin/dtsh: $(DTSH_OBJS_ASAN) $(CLI_LIB_ASAN) $(PQ_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $(DTSH_OBJS_ASAN) $(CLI_LIB_ASAN) $(PQ_LIB_ASAN) $(CAP_LIB_ASAN) $(LDLIBS_ALL)
$(B)/static/dtsh: $(DTSH_OBJS) $(CLI_LIB) $(PQ_LIB) $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -static -o $@ $(DTSH_OBJS) $(CLI_LIB) $(PQ_LIB) $(CAP_LIB) $(DTSH_STATIC_LIBS)

ALL += $(B)/bin/dtsh $(B)/asan/bin/dtsh $(B)/static/dtsh
