package io.github.zklock.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guide's sources read on GitHub, which renders AsciiDoc without resolving includes or the
 * build's attributes: each included snippet has, for GitHub only ({@code ifdef::env-github[]}), a
 * link to its source file, which exists; and the versions a chapter defines for GitHub are the
 * build's.
 */
class GuideOnGitHubTests {

	private static final Path GUIDE = Path.of("src/docs/asciidoc");

	private static final Pattern SNIPPET = Pattern.compile(
			"ifdef::env-github\\[\\]\\nSnippet: link:([^\\[]+)\\[[^\\]]+\\][^\\n]*\\n[^\\n]*\\nendif::\\[\\]\\n"
					+ "ifndef::env-github\\[\\]\\n\\[source,[^\\]]*\\]\\n----\\ninclude::\\{(snippets-\\w+|consumer)\\}/([^\\[]+)\\[");

	private static final Pattern GITHUB_VERSION = Pattern.compile(
			"ifdef::env-github\\[\\]\\n((?::[\\w-]+: [^\\n]+\\n)+)endif::\\[\\]");

	@Test
	void everySnippetLinksToItsSourceOnGitHub() throws IOException {
		int snippets = 0;
		for (Path chapter : chapters()) {
			String text = Files.readString(chapter);
			long includes = text.lines().filter((line) -> line.startsWith("include::{snippets-") || line.startsWith("include::{consumer}"))
				.count();
			Matcher linked = SNIPPET.matcher(text);
			int found = 0;
			while (linked.find()) {
				found++;
				Path target = chapter.getParent().resolve(linked.group(1)).normalize();
				assertThat(target).as("GitHub link in %s", chapter).isRegularFile();
				assertThat(target.toString().replace('\\', '/')).as("GitHub link in %s", chapter)
					.endsWith("/" + linked.group(3));
			}
			assertThat(found).as("snippets of %s with a GitHub link", chapter).isEqualTo(includes);
			snippets += found;
		}
		assertThat(snippets).isGreaterThan(30);
	}

	@Test
	void versionsDefinedForGitHubAreTheBuilds() throws IOException {
		int versions = 0;
		for (Path chapter : chapters()) {
			Matcher block = GITHUB_VERSION.matcher(Files.readString(chapter));
			while (block.find()) {
				for (String line : block.group(1).lines().toList()) {
					String name = line.substring(1, line.indexOf(": "));
					String value = line.substring(line.indexOf(": ") + 2);
					String property = switch (name) {
						case "project-version" -> "zklock.version";
						case "spring-boot-version" -> "spring-boot.version";
						case "curator-version" -> "curator.version";
						default -> throw new AssertionError("Unknown attribute for GitHub in " + chapter + ": " + line);
					};
					assertThat(value).as("%s in %s", name, chapter).isEqualTo(System.getProperty(property));
					versions++;
				}
			}
		}
		assertThat(versions).isGreaterThanOrEqualTo(4);
	}

	private static List<Path> chapters() throws IOException {
		try (Stream<Path> files = Files.list(GUIDE)) {
			return files.filter((path) -> path.toString().endsWith(".adoc")).sorted().toList();
		}
	}

}
