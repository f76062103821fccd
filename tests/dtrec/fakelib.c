/* fakelib.c - a library fakedt.c dlopen()s mid-recording (FAKEDT_DLOPEN):
 * dtrec must notice pcs in code mapped after its first snapshot. */
__attribute__((noinline)) int
fake_dlopened_fn(int x)
{
	return x * 3 + 1;
}
