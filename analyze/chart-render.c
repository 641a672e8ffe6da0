/*
 * Rendering a chart to files: one drawing function drawn on a PNG image
 * surface and on an SVG surface with the same fonts and font options, the
 * SVG made readable (<title>, <desc>, <metadata>) and reproducible
 * (renumbered surface ids), and the metadata written as NAME.json.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cairo-svg.h>

#include "chart.h"
#include "strbuf.h"
#include "util.h"

/* Sizes in px at 100 % zoom; DejaVu Sans is installed with the build dependencies. */
static const struct {
	double px;
	PangoWeight weight;
	PangoStyle style;
} font_table[SWT_FONT__COUNT] = {
	[SWT_FONT_TITLE] = { 21, PANGO_WEIGHT_BOLD, PANGO_STYLE_NORMAL },
	[SWT_FONT_SUBTITLE] = { 14, PANGO_WEIGHT_NORMAL, PANGO_STYLE_NORMAL },
	[SWT_FONT_PANEL] = { 14.5, PANGO_WEIGHT_BOLD, PANGO_STYLE_NORMAL },
	[SWT_FONT_LABEL] = { 13.5, PANGO_WEIGHT_NORMAL, PANGO_STYLE_NORMAL },
	[SWT_FONT_TICK] = { 12.5, PANGO_WEIGHT_NORMAL, PANGO_STYLE_NORMAL },
	[SWT_FONT_LEGEND] = { 13, PANGO_WEIGHT_NORMAL, PANGO_STYLE_NORMAL },
	[SWT_FONT_NOTE] = { 12, PANGO_WEIGHT_NORMAL, PANGO_STYLE_NORMAL },
	[SWT_FONT_MESSAGE] = { 15, PANGO_WEIGHT_NORMAL, PANGO_STYLE_ITALIC },
	[SWT_FONT_VALUE] = { 11, PANGO_WEIGHT_NORMAL, PANGO_STYLE_NORMAL },
};

#define SWT_CHART_FONT_FAMILY "DejaVu Sans"

int swt_chart_out_init(struct swt_chart_out *o, const char *dir, unsigned formats,
		       struct swt_err *err)
{
	memset(o, 0, sizeof(*o));
	if (!(formats & (SWT_CHART_PNG | SWT_CHART_SVG)))
		return swt_error(err, SWT_EUSAGE, "no chart format chosen");
	o->formats = formats;
	o->dir = swt_strdup(dir);
	/* a private font map: charts do not depend on what else the process drew */
	o->fonts = pango_cairo_font_map_new();
	if (!o->dir || !o->fonts) {
		swt_chart_out_release(o);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	return 0;
}

void swt_chart_out_release(struct swt_chart_out *o)
{
	free(o->dir);
	if (o->fonts)
		g_object_unref(o->fonts);
	memset(o, 0, sizeof(*o));
}

void swt_chart_meta_free(struct swt_chart_meta *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->title);
	free(m->subtitle);
	for (size_t i = 0; i < m->nr_panels; i++) {
		free(m->panels[i].title);
		free(m->panels[i].x_label);
		free(m->panels[i].y_label);
		free(m->panels[i].categories);
	}
	free(m->panels);
	for (size_t i = 0; i < m->nr_series; i++)
		free(m->series[i].name);
	free(m->series);
	for (size_t i = 0; i < m->nr_legend; i++)
		free(m->legend[i].name);
	free(m->legend);
	for (size_t i = 0; i < m->nr_notes; i++)
		free(m->notes[i]);
	free(m->notes);
	for (size_t i = 0; i < m->nr_messages; i++)
		free(m->messages[i]);
	free(m->messages);
	free(m);
}

static void json_strings(struct swt_sbuf *b, const char *key, char *const *v, size_t n)
{
	swt_sbuf_printf(b, ",\n  \"%s\": [", key);
	for (size_t i = 0; i < n; i++) {
		swt_sbuf_puts(b, i ? ", " : "");
		swt_sbuf_json(b, v[i]);
	}
	swt_sbuf_puts(b, "]");
}

/* with_files: list the formats written (the sidecar); the SVG's copy leaves them out */
static char *meta_json(const struct swt_chart_meta *m, int with_files)
{
	struct swt_sbuf b;

	swt_sbuf_init(&b);
	swt_sbuf_puts(&b, "{\n  \"name\": ");
	swt_sbuf_json(&b, m->name);
	swt_sbuf_puts(&b, ",\n  \"title\": ");
	swt_sbuf_json(&b, m->title);
	swt_sbuf_puts(&b, ",\n  \"subtitle\": ");
	swt_sbuf_json(&b, m->subtitle);
	swt_sbuf_printf(&b, ",\n  \"width\": %d,\n  \"height\": %d", SWT_CHART_WIDTH,
			SWT_CHART_HEIGHT);
	if (with_files)
		swt_sbuf_printf(&b, ",\n  \"formats\": [%s%s%s]",
				m->formats & SWT_CHART_PNG ? "\"png\"" : "",
				(m->formats & SWT_CHART_PNG) && (m->formats & SWT_CHART_SVG) ? ", "
											     : "",
				m->formats & SWT_CHART_SVG ? "\"svg\"" : "");
	swt_sbuf_puts(&b, ",\n  \"panels\": [");
	for (size_t i = 0; i < m->nr_panels; i++) {
		swt_sbuf_puts(&b, i ? ",\n    {\"title\": " : "\n    {\"title\": ");
		swt_sbuf_json(&b, m->panels[i].title);
		swt_sbuf_puts(&b, ", \"x_label\": ");
		swt_sbuf_json(&b, m->panels[i].x_label);
		swt_sbuf_puts(&b, ", \"y_label\": ");
		swt_sbuf_json(&b, m->panels[i].y_label);
		swt_sbuf_puts(&b, ", \"categories\": ");
		swt_sbuf_json(&b, m->panels[i].categories);
		swt_sbuf_puts(&b, "}");
	}
	swt_sbuf_puts(&b, m->nr_panels ? "\n  ],\n  \"series\": [" : "],\n  \"series\": [");
	for (size_t i = 0; i < m->nr_series; i++) {
		swt_sbuf_puts(&b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		swt_sbuf_json(&b, m->series[i].name);
		swt_sbuf_printf(&b, ", \"points\": %lld}", (long long)m->series[i].points);
	}
	swt_sbuf_puts(&b, m->nr_series ? "\n  ]" : "]");
	swt_sbuf_puts(&b, ",\n  \"legend\": [");
	for (size_t i = 0; i < m->nr_legend; i++) {
		swt_sbuf_puts(&b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		swt_sbuf_json(&b, m->legend[i].name);
		swt_sbuf_printf(&b, ", \"color\": \"%s\"}", m->legend[i].color);
	}
	swt_sbuf_puts(&b, m->nr_legend ? "\n  ]" : "]");
	json_strings(&b, "notes", m->notes, m->nr_notes);
	json_strings(&b, "messages", m->messages, m->nr_messages);
	swt_sbuf_puts(&b, "\n}\n");
	if (b.oom) {
		swt_sbuf_release(&b);
		return NULL;
	}
	return swt_sbuf_detach(&b);
}

char *swt_chart_meta_json(const struct swt_chart_meta *m)
{
	return meta_json(m, 1);
}

/* The <desc> text: everything a reader needs to know what the picture shows. */
static void svg_desc(struct swt_sbuf *b, const struct swt_chart_meta *m)
{
	if (m->subtitle && *m->subtitle) {
		swt_sbuf_xml(b, m->subtitle);
		swt_sbuf_puts(b, m->subtitle[strlen(m->subtitle) - 1] == '.' ? " " : ". ");
	}
	for (size_t i = 0; i < m->nr_panels; i++) {
		const struct swt_chart_panel_meta *p = &m->panels[i];

		swt_sbuf_puts(b, i ? "; " : "Panels: ");
		swt_sbuf_xml(b, p->title ? p->title : "(untitled)");
		if (p->x_label || p->y_label) {
			swt_sbuf_puts(b, " (x: ");
			swt_sbuf_xml(b, p->x_label ? p->x_label : "-");
			swt_sbuf_puts(b, ", y: ");
			swt_sbuf_xml(b, p->y_label ? p->y_label : "-");
			swt_sbuf_puts(b, ")");
		}
	}
	if (m->nr_panels)
		swt_sbuf_puts(b, ". ");
	for (size_t i = 0; i < m->nr_series; i++) {
		swt_sbuf_puts(b, i ? ", " : "Series: ");
		swt_sbuf_xml(b, m->series[i].name);
		swt_sbuf_printf(b, " (%lld)", (long long)m->series[i].points);
	}
	if (m->nr_series)
		swt_sbuf_puts(b, ". ");
	for (size_t i = 0; i < m->nr_messages; i++) {
		swt_sbuf_xml(b, m->messages[i]);
		swt_sbuf_puts(b, ". ");
	}
	for (size_t i = 0; i < m->nr_notes; i++) {
		swt_sbuf_xml(b, m->notes[i]);
		swt_sbuf_puts(b, i + 1 < m->nr_notes ? " " : "");
	}
}

/*
 * cairo names some SVG elements after a per-process counter (its surface
 * ids: "surface17", "image558"), so the same drawing gets other names in
 * another process or after other charts.  Renumber them 1, 2, ... in order
 * of first appearance, wherever they appear as id="..." or "#...".
 */
struct id_map {
	const char *prefix;
	long old[64];
	size_t n;
};

static void copy_renumbered(struct swt_sbuf *b, const char *s, size_t len, struct id_map *maps,
			    size_t nr_maps)
{
	size_t i = 0, start = 0;

	while (i < len) {
		struct id_map *m = NULL;
		size_t j, plen = 0;
		long old = 0, new_id = -1;

		if (i > 0 && (s[i - 1] == '"' || s[i - 1] == '#')) {
			for (size_t k = 0; k < nr_maps && !m; k++) {
				plen = strlen(maps[k].prefix);
				if (i + plen < len && !memcmp(s + i, maps[k].prefix, plen) &&
				    s[i + plen] >= '0' && s[i + plen] <= '9')
					m = &maps[k];
			}
		}
		if (!m) {
			i++;
			continue;
		}
		for (j = i + plen; j < len && s[j] >= '0' && s[j] <= '9' && old < 100000000; j++)
			old = old * 10 + (s[j] - '0');
		for (size_t k = 0; k < m->n; k++)
			if (m->old[k] == old)
				new_id = (long)k + 1;
		if (new_id < 0) {
			if (m->n == SWT_ARRAY_SIZE(m->old)) {
				i = j;	/* more than any chart draws: keep as is */
				continue;
			}
			m->old[m->n++] = old;
			new_id = (long)m->n;
		}
		swt_sbuf_add(b, s + start, i - start);
		swt_sbuf_printf(b, "%s%ld", m->prefix, new_id);
		i = start = j;
	}
	swt_sbuf_add(b, s + start, len - start);
}

int swt_chart_svg_finish(const char *svg, size_t len, const struct swt_chart_meta *m,
			 char **out, size_t *out_len, struct swt_err *err)
{
	struct swt_sbuf b;
	struct id_map maps[] = { { .prefix = "surface" }, { .prefix = "image" } };
	const char *open = NULL, *end;
	char *json;

	for (size_t i = 0; i + 4 < len; i++) {
		if (!memcmp(svg + i, "<svg", 4) && (svg[i + 4] == ' ' || svg[i + 4] == '>' ||
						    svg[i + 4] == '\n')) {
			open = svg + i;
			break;
		}
	}
	end = open ? memchr(open, '>', len - (size_t)(open - svg)) : NULL;
	if (!end)
		return swt_error(err, SWT_EFORMAT, "chart '%s': cairo wrote no <svg> element",
				 m->name);
	end++;
	/* the same bytes whichever other formats were written alongside */
	json = meta_json(m, 0);
	if (!json)
		return swt_error(err, SWT_ENOMEM, "out of memory");
	swt_sbuf_init(&b);
	copy_renumbered(&b, svg, (size_t)(end - svg), maps, SWT_ARRAY_SIZE(maps));
	swt_sbuf_puts(&b, "\n<title>");
	swt_sbuf_xml(&b, m->title ? m->title : m->name);
	swt_sbuf_puts(&b, "</title>\n<desc>");
	svg_desc(&b, m);
	swt_sbuf_puts(&b, "</desc>\n<metadata id=\"swaptrace-chart\">");
	swt_sbuf_xml(&b, json);
	swt_sbuf_puts(&b, "</metadata>");
	copy_renumbered(&b, end, len - (size_t)(end - svg), maps, SWT_ARRAY_SIZE(maps));
	free(json);
	if (b.oom) {
		swt_sbuf_release(&b);
		return swt_error(err, SWT_ENOMEM, "out of memory");
	}
	*out_len = b.len;
	*out = swt_sbuf_detach(&b);
	return 0;
}

static int write_file(const struct swt_chart_out *o, const char *name, const char *ext,
		      const void *data, size_t len, struct swt_err *err)
{
	char path[4096];
	int fd, ret;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s.%s", o->dir, name, ext) >= sizeof(path))
		return swt_error(err, SWT_EUSAGE, "'%s': path too long", o->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return swt_error(err, errno == ENOENT ? SWT_ENOENT : SWT_EIO, "'%s': %s", path,
				 strerror(errno));
	ret = swt_write_all(fd, data, len);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		return swt_error(err, SWT_EIO, "'%s': %s", path, strerror(-ret));
	return 0;
}

static cairo_status_t sbuf_write(void *closure, const unsigned char *data, unsigned int len)
{
	struct swt_sbuf *b = closure;

	swt_sbuf_add(b, data, len);
	return b->oom ? CAIRO_STATUS_NO_MEMORY : CAIRO_STATUS_SUCCESS;
}

/* Set up text for one surface: fonts and options identical for every format. */
static int chart_begin(struct swt_chart *c, const struct swt_chart_out *o,
		       cairo_surface_t *surface, struct swt_chart_meta *meta, int record)
{
	cairo_font_options_t *fo;

	memset(c, 0, sizeof(*c));
	c->width = SWT_CHART_WIDTH;
	c->height = SWT_CHART_HEIGHT;
	c->meta = meta;
	c->record = record;
	c->cr = cairo_create(surface);
	c->pango = pango_font_map_create_context(o->fonts);
	fo = cairo_font_options_create();
	if (!c->pango || cairo_font_options_status(fo))
		goto out_nomem;
	/* no hinting: glyph positions then do not depend on the surface type */
	cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
	cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	pango_cairo_context_set_font_options(c->pango, fo);
	pango_cairo_context_set_resolution(c->pango, 96);
	pango_context_set_round_glyph_positions(c->pango, FALSE);
	cairo_font_options_destroy(fo);
	fo = NULL;
	c->layout = pango_layout_new(c->pango);
	for (int f = 0; f < SWT_FONT__COUNT; f++) {
		c->fonts[f] = pango_font_description_new();
		if (!c->fonts[f])
			goto out_nomem;
		pango_font_description_set_family(c->fonts[f], SWT_CHART_FONT_FAMILY);
		pango_font_description_set_absolute_size(c->fonts[f],
							 font_table[f].px * PANGO_SCALE);
		pango_font_description_set_weight(c->fonts[f], font_table[f].weight);
		pango_font_description_set_style(c->fonts[f], font_table[f].style);
	}
	if (c->layout) {
		/*
		 * Wrapped text breaks between words, and inside a word only
		 * when it cannot fit: never with a hyphen pango adds, which
		 * reads as part of a name ("2:hd-d:era=4.1").
		 */
		PangoAttrList *attrs = pango_attr_list_new();

		pango_attr_list_insert(attrs, pango_attr_insert_hyphens_new(FALSE));
		pango_layout_set_attributes(c->layout, attrs);
		pango_attr_list_unref(attrs);
	}
	if (!c->layout)
		goto out_nomem;
	return 0;
out_nomem:
	if (fo)
		cairo_font_options_destroy(fo);
	return -SWT_ENOMEM;
}

static void chart_end(struct swt_chart *c)
{
	for (int f = 0; f < SWT_FONT__COUNT; f++)
		if (c->fonts[f])
			pango_font_description_free(c->fonts[f]);
	if (c->layout)
		g_object_unref(c->layout);
	if (c->pango)
		g_object_unref(c->pango);
	if (c->cr)
		cairo_destroy(c->cr);
	memset(c, 0, sizeof(*c));
}

static int draw_pass(const struct swt_chart_out *o, cairo_surface_t *surface, const char *name,
		     swt_chart_draw_fn draw, const void *data, struct swt_chart_meta *meta,
		     int record, struct swt_err *err)
{
	struct swt_chart c;
	int ret;

	ret = chart_begin(&c, o, surface, meta, record);
	if (ret) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_end;
	}
	ret = draw(&c, data, err);
	if (ret)
		goto out_end;
	if (meta->oom) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out_end;
	}
	if (cairo_status(c.cr))
		ret = swt_error(err, SWT_EIO, "chart '%s': cairo: %s", name,
				cairo_status_to_string(cairo_status(c.cr)));
out_end:
	chart_end(&c);
	return ret;
}

static int render_png(const struct swt_chart_out *o, const char *name, swt_chart_draw_fn draw,
		      const void *data, struct swt_chart_meta *meta, int record,
		      struct swt_err *err)
{
	cairo_surface_t *s;
	struct swt_sbuf png;
	int ret;

	swt_sbuf_init(&png);
	s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, SWT_CHART_WIDTH, SWT_CHART_HEIGHT);
	ret = draw_pass(o, s, name, draw, data, meta, record, err);
	if (ret)
		goto out;
	cairo_surface_flush(s);
	if (cairo_surface_write_to_png_stream(s, sbuf_write, &png) != CAIRO_STATUS_SUCCESS ||
	    png.oom) {
		ret = swt_error(err, png.oom ? SWT_ENOMEM : SWT_EIO,
				"chart '%s': writing PNG failed", name);
		goto out;
	}
	ret = write_file(o, name, "png", png.s, png.len, err);
out:
	cairo_surface_destroy(s);
	swt_sbuf_release(&png);
	return ret;
}

static int render_svg(const struct swt_chart_out *o, const char *name, swt_chart_draw_fn draw,
		      const void *data, struct swt_chart_meta *meta, int record,
		      struct swt_err *err)
{
	cairo_surface_t *s;
	struct swt_sbuf svg;
	char *final = NULL;
	size_t final_len = 0;
	int ret;

	swt_sbuf_init(&svg);
	s = cairo_svg_surface_create_for_stream(sbuf_write, &svg, SWT_CHART_WIDTH,
						SWT_CHART_HEIGHT);
	cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
	cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX);
	ret = draw_pass(o, s, name, draw, data, meta, record, err);
	cairo_surface_finish(s);
	if (ret)
		goto out;
	if (cairo_surface_status(s) || svg.oom) {
		ret = swt_error(err, svg.oom ? SWT_ENOMEM : SWT_EIO,
				"chart '%s': writing SVG failed: %s", name,
				cairo_status_to_string(cairo_surface_status(s)));
		goto out;
	}
	ret = swt_chart_svg_finish(svg.s, svg.len, meta, &final, &final_len, err);
	if (!ret)
		ret = write_file(o, name, "svg", final, final_len, err);
out:
	free(final);
	cairo_surface_destroy(s);
	swt_sbuf_release(&svg);
	return ret;
}

int swt_chart_render(struct swt_chart_out *o, const char *name, swt_chart_draw_fn draw,
		     const void *data, struct swt_chart_meta **meta_out, struct swt_err *err)
{
	struct swt_chart_meta *meta;
	char *json = NULL;
	int ret, record = 1;

	meta = calloc(1, sizeof(*meta));
	if (!meta || !(meta->name = swt_strdup(name))) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	meta->formats = o->formats;
	if (o->formats & SWT_CHART_PNG) {
		ret = render_png(o, name, draw, data, meta, record, err);
		if (ret)
			goto out;
		record = 0;
	}
	if (o->formats & SWT_CHART_SVG) {
		ret = render_svg(o, name, draw, data, meta, record, err);
		if (ret)
			goto out;
	}
	json = swt_chart_meta_json(meta);
	if (!json) {
		ret = swt_error(err, SWT_ENOMEM, "out of memory");
		goto out;
	}
	ret = write_file(o, name, "json", json, strlen(json), err);
out:
	free(json);
	if (ret || !meta_out)
		swt_chart_meta_free(meta);
	else
		*meta_out = meta;
	return ret;
}
