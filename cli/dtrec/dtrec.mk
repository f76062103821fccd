# cli/dtrec: the recorder.  Dynamic, ASan and static (for the VM) builds.
DTREC_OBJS := cli/dtrec/main.o
ALL += $(B)/bin/dtrec $(B)/asan/bin/dtrec $(B)/static/dtrec

$(B)/bin/dtrec: $(DTREC_OBJS:%=$(B)/obj/%) $(CLI_LIB) $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_ALL)
$(B)/asan/bin/dtrec: $(DTREC_OBJS:%=$(B)/asan/obj/%) $(CLI_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)
# Static: the busybox guest has no shared libraries.  Only the archive
# members dtrec references are pulled in, so sqlite and libedit stay out.
$(B)/static/dtrec: $(DTREC_OBJS:%=$(B)/obj/%) $(CLI_LIB) $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -static -o $@ $^ $(LDLIBS_DW_STATIC) -lcapstone -lxxhash -lpthread -lm

# Demo workload: frame pointers so user stacks unwind; static for the guest.
$(B)/static/hotloop: demo/hotloop.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_STD) -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-inline -fno-optimize-sibling-calls -static -o $@ $<
ALL += $(B)/static/hotloop

# the same, dynamic, for the host recording through perf_event_open
$(B)/demo/hotloop: demo/hotloop.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_STD) -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-inline -fno-optimize-sibling-calls -o $@ $<

demo: all $(B)/static/hotloop $(B)/demo/hotloop
	@demo/demo.sh
