package io.github.zklock.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's snippets are compiled and tested ones: each Java block's lines appear, in order, in
 * one source file of this module or of the consumer build (the application of the quick start,
 * {@code zk-lock-spring-boot-starter/src/it/consumer}, which the main build builds and tests against
 * the installed artifacts); each XML and properties block in that application's {@code pom.xml}
 * and {@code application.properties} ({@code @project.version@} read as this build's version).
 * Lines are compared without indentation. In a README line, {@code ...} stands for code left out:
 * a line of only {@code ...} is skipped, and a line with {@code ...} in it matches a source line
 * that starts with what comes before it.
 */
class ReadmeSnippetsTests {

	private static final Path CONSUMER = Path.of("../zk-lock-spring-boot-starter/src/it/consumer");

	@Test
	void everyJavaSnippetOfTheReadmeIsInACompiledSource() throws IOException {
		List<List<String>> sources = new ArrayList<>();
		sources.addAll(sources(Path.of("src/main/java"), ".java"));
		sources.addAll(sources(CONSUMER.resolve("src"), ".java"));
		assertThat(checkBlocks("java", sources)).as("Java snippets in the README").isGreaterThanOrEqualTo(3);
	}

	@Test
	void quickStartsBuildFileAndPropertiesAreTheConsumerBuilds() throws IOException {
		assertThat(checkBlocks("xml", sources(CONSUMER, "pom.xml"))).as("XML snippets in the README").isPositive();
		assertThat(checkBlocks("properties", sources(CONSUMER.resolve("src/main/resources"), ".properties")))
			.as("properties snippets in the README").isPositive();
	}

	/** Check each README block of a language against the sources; return how many there are. */
	private static int checkBlocks(String language, List<List<String>> sources) throws IOException {
		assertThat(sources).isNotEmpty();
		Matcher blocks = Pattern.compile("```" + language + "\\n(.*?)```", Pattern.DOTALL)
			.matcher(Files.readString(Path.of("../README.md")));
		int found = 0;
		while (blocks.find()) {
			found++;
			List<String> block = blocks.group(1).lines().map(String::strip)
				.filter((line) -> !line.isEmpty() && !line.equals("..."))
				.toList();
			assertThat(sources).as("a source file holding the README's snippet:%n%s", blocks.group(1))
				.anySatisfy((source) -> assertThat(inOrder(block, source)).isTrue());
		}
		return found;
	}

	/** The files under a directory whose names end as given, each as its stripped lines. */
	private static List<List<String>> sources(Path root, String suffix) throws IOException {
		String version = System.getProperty("zklock.version", "");
		assertThat(version).as("the build's version (system property zklock.version)").isNotEmpty();
		List<List<String>> sources = new ArrayList<>();
		try (Stream<Path> files = Files.walk(root)) {
			for (Path file : files.filter((path) -> path.toString().endsWith(suffix)).sorted().toList()) {
				sources.add(Files.readAllLines(file).stream()
					.map((line) -> line.replace("@project.version@", version).strip())
					.toList());
			}
		}
		return sources;
	}

	/** Whether each line of the snippet matches a line of the source, in order. */
	private static boolean inOrder(List<String> snippet, List<String> source) {
		int at = 0;
		for (String line : snippet) {
			int elided = line.indexOf("...");
			String prefix = (elided >= 0) ? line.substring(0, elided).strip() : null;
			while (at < source.size()
					&& !((prefix != null) ? source.get(at).startsWith(prefix) : source.get(at).equals(line))) {
				at++;
			}
			if (at == source.size()) {
				return false;
			}
			at++;
		}
		return true;
	}

}
