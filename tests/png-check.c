/*
 * png-check: load a PNG with cairo's own loader and check it is a real
 * picture of the expected size, for the report tests.
 *
 *   png-check FILE WIDTH HEIGHT
 *
 * Prints "WIDTHxHEIGHT colours=N ink=P%" (distinct colours up to 4096, and
 * the share of pixels that are not the background colour, which is the
 * top-left pixel).  Fails when the file does not load, has another size, or
 * is blank: one colour, or less than 0.5 % ink.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cairo.h>

#define MAX_COLOURS 4096

int main(int argc, char **argv)
{
	static uint32_t seen[MAX_COLOURS];
	cairo_surface_t *s;
	int w, h, stride, want_w, want_h, status = 1;
	size_t colours = 0, ink = 0;
	unsigned char *data;
	uint32_t bg;

	if (argc != 4) {
		fprintf(stderr, "usage: png-check FILE WIDTH HEIGHT\n");
		return 2;
	}
	want_w = atoi(argv[2]);
	want_h = atoi(argv[3]);
	s = cairo_image_surface_create_from_png(argv[1]);
	if (cairo_surface_status(s)) {
		fprintf(stderr, "png-check: '%s': %s\n", argv[1],
			cairo_status_to_string(cairo_surface_status(s)));
		goto out;
	}
	w = cairo_image_surface_get_width(s);
	h = cairo_image_surface_get_height(s);
	if (w != want_w || h != want_h) {
		fprintf(stderr, "png-check: '%s': %dx%d, expected %dx%d\n", argv[1], w, h, want_w,
			want_h);
		goto out;
	}
	cairo_surface_flush(s);
	data = cairo_image_surface_get_data(s);
	stride = cairo_image_surface_get_stride(s);
	bg = *(uint32_t *)(void *)data;
	for (int y = 0; y < h; y++) {
		const uint32_t *row = (const uint32_t *)(void *)(data + (size_t)y * (size_t)stride);

		for (int x = 0; x < w; x++) {
			size_t i;

			ink += row[x] != bg;
			for (i = 0; i < colours && seen[i] != row[x]; i++)
				;
			if (i == colours && colours < MAX_COLOURS)
				seen[colours++] = row[x];
		}
	}
	printf("%dx%d colours=%zu ink=%.2f%%\n", w, h, colours,
	       100.0 * (double)ink / ((double)w * h));
	if (colours < 2 || ink * 200 < (size_t)w * (size_t)h) {
		fprintf(stderr, "png-check: '%s': blank picture\n", argv[1]);
		goto out;
	}
	status = 0;
out:
	cairo_surface_destroy(s);
	return status;
}
