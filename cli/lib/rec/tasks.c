/* tasks.c - see tasks.h. */
#include "dt_grow.h"
#include "tasks.h"

#include <stdlib.h>
#include <string.h>

static uint64_t
task_rehash(const void *ctx, uint32_t e)
{
	return dt_htab_hash_int(((const struct tasks *)ctx)->v[e].key);
}

struct task *
task_get(struct tasks *t, uint32_t key, int create)
{
	uint32_t e;

	if (key == 0)
		key = 0xffffffffu;	/* the idle task */
	uint64_t h = dt_htab_hash_int(key);
	for (size_t i = dt_htab_first(&t->ix, h); (e = dt_htab_at(&t->ix, i)) != DT_HTAB_NONE;
	     i = dt_htab_next(&t->ix, i))
		if (t->v[e].key == key)
			return &t->v[e];
	if (!create)
		return NULL;
	if (DT_GROW(t->v, t->cap, t->n, 1, 1024))
		return NULL;
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].key = key;
	if (dt_htab_add(&t->ix, h, (uint32_t)t->n, task_rehash, t))
		return NULL;
	return &t->v[t->n++];
}

void
tasks_free(struct tasks *t)
{
	for (size_t i = 0; i < t->n; i++) {
		for (size_t j = 0; j < t->v[i].p.nmaps; j++)
			free((char *)t->v[i].maps[j].name);
		free(t->v[i].maps);
		free(t->v[i].exe);
	}
	free(t->v);
	dt_htab_free(&t->ix);
}
