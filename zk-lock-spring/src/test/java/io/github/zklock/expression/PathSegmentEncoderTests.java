package io.github.zklock.expression;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.curator.utils.PathUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Tests for {@link PathSegmentEncoder}.
 */
class PathSegmentEncoderTests {

	private static final String[] TRICKY = { "/", "%", ".", "..", "...", "a", "2", "E", "F", "%2E", "%2F", "\u0000",
			"\n", "\u001f", "\u007f", "\u0085", "\u009f", "\u00a0", "\ud83d", "\ude00", "\ud83d\ude00", "\ud800",
			"\udfff", "\ue000", "\uf8ff", "\ufff0", "\uffff", "北", " ", "-", "zookeeper" };

	@ParameterizedTest
	@ValueSource(strings = { "order-42", "42", "北京", "a.b", ".hidden", "...", "a..b", "A_b c:d@e+f", "zookeeper",
			"\u00e9t\u00e9", "\u00a0", "\uffef" })
	void keepsPlainValuesUnchanged(String value) {
		assertThat(PathSegmentEncoder.encode(value)).isEqualTo(value);
	}

	@Test
	void encodesSlash() {
		assertThat(PathSegmentEncoder.encode("/")).isEqualTo("%2F");
		assertThat(PathSegmentEncoder.encode("a/b")).isEqualTo("a%2Fb");
		assertThat(PathSegmentEncoder.encode("/a/../b/")).isEqualTo("%2Fa%2F..%2Fb%2F");
	}

	@Test
	void encodesPercentSoThatEncodedLookingValuesStayDistinct() {
		assertThat(PathSegmentEncoder.encode("%")).isEqualTo("%25");
		assertThat(PathSegmentEncoder.encode("%2F")).isEqualTo("%252F");
		assertThat(PathSegmentEncoder.encode("%2F")).isNotEqualTo(PathSegmentEncoder.encode("/"));
	}

	@Test
	void encodesDotSegments() {
		assertThat(PathSegmentEncoder.encode(".")).isEqualTo("%2E");
		assertThat(PathSegmentEncoder.encode("..")).isEqualTo("%2E%2E");
		assertThat(PathSegmentEncoder.encode("%2E")).isNotEqualTo(PathSegmentEncoder.encode("."));
	}

	@Test
	void encodesControlCharacters() {
		assertThat(PathSegmentEncoder.encode("\u0000")).isEqualTo("%00");
		assertThat(PathSegmentEncoder.encode("a\nb")).isEqualTo("a%0Ab");
		assertThat(PathSegmentEncoder.encode("\u001f")).isEqualTo("%1F");
		assertThat(PathSegmentEncoder.encode("\u007f")).isEqualTo("%7F");
		assertThat(PathSegmentEncoder.encode("\u0085")).isEqualTo("%C2%85");
		assertThat(PathSegmentEncoder.encode("\u009f")).isEqualTo("%C2%9F");
	}

	@Test
	void encodesSurrogatePairAsOneCodePoint() {
		// U+1F600 (grinning face), UTF-8 F0 9F 98 80.
		assertThat(PathSegmentEncoder.encode("\ud83d\ude00")).isEqualTo("%F0%9F%98%80");
		assertThat(PathSegmentEncoder.encode("a\ud83d\ude00b")).isEqualTo("a%F0%9F%98%80b");
	}

	@Test
	void encodesLoneSurrogatesDistinctly() {
		assertThat(PathSegmentEncoder.encode("\ud800")).isEqualTo("%ED%A0%80");
		assertThat(PathSegmentEncoder.encode("\udfff")).isEqualTo("%ED%BF%BF");
		assertThat(PathSegmentEncoder.encode("a\ud83d")).isEqualTo("a%ED%A0%BD");
		assertThat(PathSegmentEncoder.encode("\ude00\ud83d")).isEqualTo("%ED%B8%80%ED%A0%BD");
		assertThat(PathSegmentEncoder.encode("\ud800")).isNotEqualTo(PathSegmentEncoder.encode("\udfff"))
			.isNotEqualTo(PathSegmentEncoder.encode("\ufffd"));
	}

	@Test
	void encodesCharactersZooKeeperRejects() {
		assertThat(PathSegmentEncoder.encode("\ue000")).isEqualTo("%EE%80%80");
		assertThat(PathSegmentEncoder.encode("\uf8ff")).isEqualTo("%EF%A3%BF");
		assertThat(PathSegmentEncoder.encode("\ufff0")).isEqualTo("%EF%BF%B0");
		assertThat(PathSegmentEncoder.encode("\uffff")).isEqualTo("%EF%BF%BF");
	}

	@Test
	void givesDistinctLegalSegmentsForDistinctTrickyValues() {
		Map<String, String> inputByEncoded = new HashMap<>();
		for (String value : trickyValues()) {
			String encoded = PathSegmentEncoder.encode(value);
			String previous = inputByEncoded.putIfAbsent(encoded, value);
			if (previous != null && !previous.equals(value)) {
				fail("'%s' and '%s' both encode to '%s'", escape(previous), escape(value), encoded);
			}
			assertThat(encoded).as("encoding of '%s'", escape(value)).doesNotContain("/").isNotEmpty();
			assertLegalSegment(value, encoded);
		}
		assertThat(inputByEncoded).hasSizeGreaterThan(10_000);
	}

	private static void assertLegalSegment(String value, String encoded) {
		try {
			PathUtils.validatePath("/" + encoded);
			PathUtils.validatePath("/a/" + encoded + "/b");
		}
		catch (IllegalArgumentException ex) {
			fail("Encoding '%s' of '%s' is not a legal path segment: %s", escape(encoded), escape(value),
					ex.getMessage());
		}
	}

	private static List<String> trickyValues() {
		List<String> values = new ArrayList<>(List.of(TRICKY));
		for (String first : TRICKY) {
			for (String second : TRICKY) {
				values.add(first + second);
			}
		}
		Random random = new Random(42);
		for (int i = 0; i < 20_000; i++) {
			StringBuilder value = new StringBuilder();
			int length = 1 + random.nextInt(6);
			for (int j = 0; j < length; j++) {
				value.append(TRICKY[random.nextInt(TRICKY.length)]);
			}
			values.add(value.toString());
		}
		for (int i = 0; i < 5_000; i++) {
			// Any UTF-16 units, including lone surrogates and unassigned characters.
			char[] chars = new char[1 + random.nextInt(4)];
			for (int j = 0; j < chars.length; j++) {
				chars[j] = (char) random.nextInt(Character.MAX_VALUE + 1);
			}
			values.add(new String(chars));
		}
		return values;
	}

	private static String escape(String value) {
		StringBuilder escaped = new StringBuilder();
		value.chars().forEach((c) -> {
			if (c >= 0x20 && c < 0x7f) {
				escaped.append((char) c);
			}
			else {
				escaped.append(String.format("\\u%04x", c));
			}
		});
		return escaped.toString();
	}

}
