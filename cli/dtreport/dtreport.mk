# cli/dtreport: the offline analyser (dynamic and ASan builds).
DTREPORT_OBJS := cli/dtreport/main.o
ALL += $(B)/bin/dtreport $(B)/asan/bin/dtreport

$(B)/bin/dtreport: $(DTREPORT_OBJS:%=$(B)/obj/%) $(CLI_LIB) $(PQ_LIB) $(CAP_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS_ALL)
$(B)/asan/bin/dtreport: $(DTREPORT_OBJS:%=$(B)/asan/obj/%) $(CLI_LIB_ASAN) $(PQ_LIB_ASAN) $(CAP_LIB_ASAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)
