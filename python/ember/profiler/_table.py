"""The text table of key_averages().table(): torch's columns, widths and number formats."""

_COLUMN_WIDTH = 12
_SPACING = 2


def format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_time_as(us, unit):
    if unit == "s":
        return f"{us / 1e6:.3f}s"
    if unit == "ms":
        return f"{us / 1e3:.3f}ms"
    if unit == "us":
        return f"{us:.3f}us"
    return format_time(us)


def _format_share(us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{us * 100.0 / total_us:.2f}%"


def format_memory(nbytes):
    for limit, suffix in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if abs(nbytes) >= limit:
            return f"{nbytes / limit:.2f} {suffix}"
    return f"{nbytes} B"


def _sort_key(sort_by):
    # torch accepts "cuda_time_total" and the like for the device columns.
    attr = sort_by.replace("cuda", "device")
    return lambda e: getattr(e, attr)


def _trim(text, width):
    return text[:width - 3] + "..." if width is not None and len(text) >= width - 3 else text


def build(events, *, sort_by, row_limit, max_src_column_width, max_name_column_width, max_shapes_column_width,
          header, top_level_events_only, time_unit, use_device, profile_memory):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=_sort_key(sort_by), reverse=True)
    has_device_time = use_device is not None and any(e.self_device_time_total > 0 for e in events)
    has_device_mem = use_device is not None and profile_memory and any(e.self_device_memory_usage > 0
                                                                       for e in events)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]
    device = (use_device or "").upper()

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        headers += [f"Self {device}", f"Self {device} %", f"{device} total", f"{device} time avg"]
    if has_device_mem:
        headers += [f"{device} Mem", f"Self {device} Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [_COLUMN_WIDTH] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_shapes:
        shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
        if max_shapes_column_width is not None:
            shapes_width = min(shapes_width, max_shapes_column_width)
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    if stacks:
        src_width = max(len(entry) for stack in stacks for entry in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")

    row_format = "".join("{: " + a + str(w) + "}" + " " * _SPACING for a, w in zip(aligns, widths))
    separator = "".join("-" * w + " " * _SPACING for w in widths)
    line_length = sum(widths) + _SPACING * (len(widths) - 1)

    self_cpu_sum = sum(e.self_cpu_time_total for e in events)
    self_device_sum = sum(e.self_device_time_total for e in events if not e.is_user_annotation)
    t = lambda us: _format_time_as(us, time_unit)  # noqa: E731

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        row = [_trim(e.key, max_name_column_width), _format_share(e.self_cpu_time_total, self_cpu_sum),
               t(e.self_cpu_time_total), _format_share(e.cpu_time_total, self_cpu_sum), t(e.cpu_time_total),
               t(e.cpu_time)]
        if has_device_time:
            row += [t(e.self_device_time_total), _format_share(e.self_device_time_total, self_device_sum),
                    t(e.device_time_total), t(e.device_time)]
        if has_device_mem:
            row += [format_memory(e.device_memory_usage), format_memory(e.self_device_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:widths[headers.index("Input Shapes")]])
        if stacks:
            row.append(_trim_path(e.stack[0] if e.stack else "", widths[-1]))
        lines.append(row_format.format(*row))
        if stacks:
            for entry in (e.stack or [])[1:]:
                lines.append(row_format.format(*([""] * (len(headers) - 1) + [_trim_path(entry, widths[-1])])))
            lines.append(row_format.format(*([""] * len(headers))))
    lines.append(separator)
    lines.append(f"Self CPU time total: {t(self_cpu_sum)}")
    if has_device_time:
        lines.append(f"Self {device} time total: {t(self_device_sum)}")
    return "\n".join(lines) + "\n"


def _trim_path(path, width):
    # Keep the end of a long path: the file name and line matter most.
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path
