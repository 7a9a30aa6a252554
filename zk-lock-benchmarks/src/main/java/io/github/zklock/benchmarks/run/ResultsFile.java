package io.github.zklock.benchmarks.run;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The latest figures of a run, as one properties file that the README, the guide and
 * {@code BENCHMARKS.md} quote and {@link Charts} draws: written by {@link BenchMain} at the end of a
 * run (by default {@code zk-lock-benchmarks/results/latest.properties}). Keys:
 * <ul>
 * <li>{@code run.*}: when, how ({@code run.mode}, {@code run.settings}), the machine
 * ({@code run.machine}, {@code run.cores}), the load average before and after, whether the servers
 * synced their logs ({@code run.fsync}), the versions;</li>
 * <li>{@code ratio.NAME}: a {@code RATIO} line's value (ours ÷ baseline in operations per second),
 * with {@code ratio.NAME.p25} / {@code .p75} / {@code .rounds} where the interleaved runs give them;</li>
 * <li>{@code LINE.ID.FIELD}: each field of the {@code HOTKEY}, {@code REQUESTS}, {@code MEMORY},
 * {@code KEPT_KEYS} and {@code ASYNC_QUEUE} lines, under the line's kind in lower case and its first field's value
 * ({@code hotkey.zk_lock.3x8.grants_per_s}, {@code requests.EXCLUSIVE.per_cycle},
 * {@code async_queue.exclusive.heap_per_grant_bytes}); a {@code REQUESTS} line named by another
 * field than {@code mode} goes under that field and its value
 * ({@code requests.contended8_lock4j.per_grant},
 * {@code requests.condition_await_signalled.lock_cycle_per_cycle}).</li>
 * </ul>
 * Keys are written sorted, so that two runs' files compare line by line.
 */
final class ResultsFile {

	private final Map<String, String> values = new LinkedHashMap<>();

	void put(String key, Object value) {
		this.values.put(key, String.valueOf(value));
	}

	/**
	 * Add one result line ({@code KIND field=value ...}) under its kind and identity.
	 * @param line the line, leading blanks allowed
	 */
	void putLine(String line) {
		String[] words = line.strip().split("\\s+");
		String kind = words[0].toLowerCase(java.util.Locale.ROOT);
		Map<String, String> fields = new LinkedHashMap<>();
		for (int i = 1; i < words.length; i++) {
			int equals = words[i].indexOf('=');
			if (equals > 0) {
				fields.put(words[i].substring(0, equals), words[i].substring(equals + 1));
			}
		}
		if (fields.isEmpty()) {
			return;
		}
		String id = identity(kind, fields);
		fields.forEach((field, value) -> put(kind + "." + id + "." + field, value));
	}

	private static String identity(String kind, Map<String, String> fields) {
		return switch (kind) {
			case "hotkey" -> fields.get("contender") + "." + fields.get("jvms") + "x" + fields.get("threads");
			case "memory" -> fields.get("library");
			case "async_queue" -> fields.get("kind");
			case "kept_keys" -> "max_keys_" + fields.get("max_keys");
			default -> {
				// REQUESTS mode=..., peer=..., contended8=..., condition=...: the first field names the line.
				Map.Entry<String, String> first = fields.entrySet().iterator().next();
				yield first.getKey().equals("mode") ? first.getValue() : first.getKey() + "_" + first.getValue();
			}
		};
	}

	void addLines(List<String> lines) {
		lines.forEach(this::putLine);
	}

	void write(Path file, String comment) throws IOException {
		Files.createDirectories(file.toAbsolutePath().getParent());
		try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
			out.write("# " + comment + "\n");
			for (Map.Entry<String, String> entry : new TreeMap<>(this.values).entrySet()) {
				out.write(escape(entry.getKey()) + "=" + escape(entry.getValue()) + "\n");
			}
		}
	}

	private static String escape(String text) {
		StringBuilder out = new StringBuilder();
		for (char c : text.toCharArray()) {
			switch (c) {
				case '\\' -> out.append("\\\\");
				case '=', ':', '#', '!' -> out.append('\\').append(c);
				case '\n' -> out.append("\\n");
				default -> {
					if (c > 0x7e) {
						out.append(String.format("\\u%04x", (int) c));
					}
					else {
						out.append(c);
					}
				}
			}
		}
		return out.toString();
	}

	static Properties read(Path file) throws IOException {
		Properties properties = new Properties();
		try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
			properties.load(in);
		}
		return properties;
	}

}
