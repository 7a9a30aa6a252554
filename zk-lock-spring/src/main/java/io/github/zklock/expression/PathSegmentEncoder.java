package io.github.zklock.expression;

/**
 * Encodes a value so that it is exactly one legal ZooKeeper path segment.
 *
 * <p>Percent-encodes (UTF-8 bytes, {@code %XX}) the characters that would add or climb segments
 * or that ZooKeeper rejects in a path: {@code /}, {@code %} itself, control characters
 * ({@code U+0000..U+001F}, {@code U+007F..U+009F}), and the ranges {@code U+D800..U+F8FF} and
 * {@code U+FFF0..U+FFFF}; a value that is exactly {@code .} or {@code ..} becomes {@code %2E} or
 * {@code %2E%2E}. Every other character is kept, so readable values stay readable
 * ({@code order-42}, {@code 北京}). Distinct values always give distinct segments.
 */
public final class PathSegmentEncoder {

	private static final char[] HEX = "0123456789ABCDEF".toCharArray();

	private PathSegmentEncoder() {
	}

	/**
	 * Encode a value as one path segment.
	 * @param value a non-empty value
	 * @return the encoded segment, never containing {@code /} and never {@code .} or {@code ..}
	 */
	public static String encode(String value) {
		if (value.equals(".")) {
			return "%2E";
		}
		if (value.equals("..")) {
			return "%2E%2E";
		}
		int first = firstToEncode(value);
		if (first < 0) {
			return value;
		}
		StringBuilder encoded = new StringBuilder(value.length() + 16).append(value, 0, first);
		for (int i = first; i < value.length(); i++) {
			char c = value.charAt(i);
			if (!mustEncode(c)) {
				encoded.append(c);
			}
			else {
				int codePoint = value.codePointAt(i);
				appendUtf8(encoded, codePoint);
				i += Character.charCount(codePoint) - 1;
			}
		}
		return encoded.toString();
	}

	private static int firstToEncode(String value) {
		for (int i = 0; i < value.length(); i++) {
			if (mustEncode(value.charAt(i))) {
				return i;
			}
		}
		return -1;
	}

	private static boolean mustEncode(char c) {
		return c == '/' || c == '%' || c <= '\u001f' || (c >= '\u007f' && c <= '\u009f')
				|| (c >= '\ud800' && c <= '\uf8ff') || c >= '\ufff0';
	}

	private static void appendUtf8(StringBuilder encoded, int codePoint) {
		// Encoded by hand rather than with String.getBytes so that a lone surrogate gets its own
		// three bytes instead of a shared replacement character: the encoding stays one-to-one.
		if (codePoint < 0x80) {
			appendByte(encoded, codePoint);
		}
		else if (codePoint < 0x800) {
			appendByte(encoded, 0xC0 | (codePoint >> 6));
			appendByte(encoded, 0x80 | (codePoint & 0x3F));
		}
		else if (codePoint < 0x10000) {
			appendByte(encoded, 0xE0 | (codePoint >> 12));
			appendByte(encoded, 0x80 | ((codePoint >> 6) & 0x3F));
			appendByte(encoded, 0x80 | (codePoint & 0x3F));
		}
		else {
			appendByte(encoded, 0xF0 | (codePoint >> 18));
			appendByte(encoded, 0x80 | ((codePoint >> 12) & 0x3F));
			appendByte(encoded, 0x80 | ((codePoint >> 6) & 0x3F));
			appendByte(encoded, 0x80 | (codePoint & 0x3F));
		}
	}

	private static void appendByte(StringBuilder encoded, int b) {
		encoded.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
	}

}
