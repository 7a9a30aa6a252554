package io.github.zklock.benchmarks;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.convert.support.DefaultConversionService;
import org.springframework.expression.Expression;
import org.springframework.expression.ParserContext;
import org.springframework.expression.common.CompositeStringExpression;
import org.springframework.expression.common.LiteralExpression;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import io.github.zklock.InvalidLockPathException;
import io.github.zklock.aop.LockOperation;
import io.github.zklock.aop.LockOperationSource;
import io.github.zklock.expression.LockPathExpressionEvaluator;
import io.github.zklock.expression.LockPathTemplate;
import io.github.zklock.expression.PathSegmentEncoder;

/**
 * Prototype of a proposed change to the starter, for the benchmarks only: path templates whose
 * expressions are all bare argument references ({@code #sku}, {@code #p0}, {@code #a0}) are resolved
 * by reading the argument, converting it to a string with the shared conversion service (as SpEL's
 * type converter does) and encoding it, without building a SpEL evaluation context on every call.
 * Any other template goes to the starter's SpEL evaluation. Installed in place of the starter's
 * {@link LockOperationSource} bean, which the auto-configuration allows.
 */
public class FastPathLockOperationSource extends LockOperationSource {

	private static final Pattern POSITIONAL = Pattern.compile("[pa](\\d+)");

	// Per parsed template, by identity: each operation (one method) parses its own.
	private final Map<LockPathTemplate, Optional<ArgumentPath>> fastPaths = new ConcurrentHashMap<>();

	private final DefaultParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final SpelExpressionParser parser = new SpelExpressionParser();

	/**
	 * Create a source.
	 * @param evaluator the starter's evaluator, for templates the fast path does not cover
	 */
	public FastPathLockOperationSource(LockPathExpressionEvaluator evaluator) {
		super(evaluator);
	}

	@Override
	public String resolvePath(LockOperation operation, LockPathTemplate path, @Nullable Object[] args,
			@Nullable Object target) {
		ArgumentPath fast = this.fastPaths
			.computeIfAbsent(path, (template) -> argumentPath(operation.method(), template))
			.orElse(null);
		return (fast != null) ? fast.resolve(args) : super.resolvePath(operation, path, args, target);
	}

	private Optional<ArgumentPath> argumentPath(Method method, LockPathTemplate path) {
		String source = path.getSource();
		Expression expression = this.parser.parseExpression(source, ParserContext.TEMPLATE_EXPRESSION);
		Expression[] pieces = (expression instanceof CompositeStringExpression composite) ? composite.getExpressions()
				: new Expression[] { expression };
		String[] names = this.parameterNames.getParameterNames(method);
		List<Object> parts = new ArrayList<>();
		for (Expression piece : pieces) {
			if (piece instanceof LiteralExpression literal) {
				parts.add(literal.getExpressionString());
				continue;
			}
			if (!(piece instanceof SpelExpression spel) || !(spel.getAST() instanceof VariableReference)) {
				return Optional.empty();
			}
			int index = argumentIndex(spel.getAST().toStringAST().substring(1), names);
			if (index < 0) {
				return Optional.empty();
			}
			parts.add(new Argument(index, piece.getExpressionString()));
		}
		return Optional.of(new ArgumentPath(source, parts));
	}

	private static int argumentIndex(String variable, String @Nullable [] names) {
		if (names != null) {
			for (int i = 0; i < names.length; i++) {
				if (names[i].equals(variable)) {
					return i;
				}
			}
		}
		Matcher positional = POSITIONAL.matcher(variable);
		return positional.matches() ? Integer.parseInt(positional.group(1)) : -1;
	}

	private record Argument(int index, String expression) {
	}

	private record ArgumentPath(String source, List<Object> parts) {

		String resolve(@Nullable Object[] args) {
			StringBuilder path = new StringBuilder(64);
			for (Object part : this.parts) {
				if (part instanceof String literal) {
					path.append(literal);
					continue;
				}
				Argument argument = (Argument) part;
				Object value = (args != null && argument.index() < args.length) ? args[argument.index()] : null;
				String text = (value != null) ? DefaultConversionService.getSharedInstance().convert(value, String.class)
						: null;
				if (text == null || text.isEmpty()) {
					throw new InvalidLockPathException("Lock path template '" + this.source + "': expression '"
							+ argument.expression() + "' is " + ((text == null) ? "null" : "empty"));
				}
				path.append(PathSegmentEncoder.encode(text));
			}
			return path.toString();
		}

	}

}
