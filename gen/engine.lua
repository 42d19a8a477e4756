-- engine.lua: the template engine of kiln's generator.
--
-- A template is CUDA text with two kinds of Lua in it:
--   * a line whose first non-blank character is `$` is a Lua statement
--     (`$ for _, a in ipairs(acts) do` ... `$ end`);
--   * `${expr}` inside any other line is replaced by the value of expr.
-- The template compiles to one Lua chunk in which template line N is Lua line N,
-- so a Lua error (syntax or run time) names the template file and its line.
-- Rendered text carries `#line` directives whenever its source line is not the
-- one after the line emitted before, so nvcc errors land on the template too.

local engine = {}

-- Finds the `}` that closes the `${` opened at position `open` (the `{`).
local function closing_brace(line, open)
  local depth = 0
  for i = open, #line do
    local c = line:sub(i, i)
    if c == "{" then
      depth = depth + 1
    elseif c == "}" then
      depth = depth - 1
      if depth == 0 then return i end
    end
  end
  return nil
end

-- Turns one text line into a Lua expression that builds it.
local function text_line_expr(line, path, lineno)
  local parts, pos = {}, 1
  while true do
    local s = line:find("${", pos, true)
    if not s then break end
    local e = closing_brace(line, s + 1)
    if not e then
      error(("%s:%d: unclosed ${ in template text"):format(path, lineno), 0)
    end
    if s > pos then parts[#parts + 1] = ("%q"):format(line:sub(pos, s - 1)) end
    local expr = line:sub(s + 2, e - 1)
    if expr:match("^%s*$") then
      error(("%s:%d: empty ${} in template text"):format(path, lineno), 0)
    end
    parts[#parts + 1] = ("_s((%s), %q)"):format(expr, expr)
    pos = e + 1
  end
  if pos <= #line then parts[#parts + 1] = ("%q"):format(line:sub(pos)) end
  if #parts == 0 then return '""' end
  return table.concat(parts, " .. ")
end

-- Compiles template text to a Lua function(env) -> rendered string.
function engine.compile(text, path)
  local lua_lines = {}
  local lineno = 0
  for line in (text .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("(.-)\n") do
    lineno = lineno + 1
    local code = line:match("^%s*%$%s(.*)$") or line:match("^%s*%$$") and ""
    if code then
      -- %q-escaped strings keep a code line on one Lua line.
      lua_lines[lineno] = code
    else
      lua_lines[lineno] = ("_emit(%d, %s)"):format(lineno, text_line_expr(line, path, lineno))
    end
  end
  local chunk_text = table.concat(lua_lines, "\n")
  return function(env)
    local out, last = {}, nil
    local scope = setmetatable({}, { __index = function(_, k)
      local v = env[k]
      if v == nil then v = _G[k] end
      return v
    end })
    scope._s = function(v, expr)
      if v == nil then
        error(("${%s} is nil"):format(expr), 2)
      end
      if type(v) == "boolean" then return v and "true" or "false" end
      if math.type(v) == "float" and v == math.floor(v) then
        error(("${%s} is the float %s; templates substitute integers or strings"):format(expr, tostring(v)), 2)
      end
      return tostring(v)
    end
    scope._emit = function(n, s)
      if last == nil or n ~= last + 1 then
        out[#out + 1] = ('#line %d "%s"'):format(n, path)
      end
      out[#out + 1] = s
      last = n
    end
    local fn, err = load(chunk_text, "@" .. path, "t", scope)
    if not fn then error(err, 0) end
    local ok, rerr = pcall(fn)
    if not ok then error(rerr, 0) end
    return table.concat(out, "\n") .. "\n"
  end
end

function engine.read(path)
  local f, err = io.open(path, "rb")
  if not f then error(("cannot read %s: %s"):format(path, err), 0) end
  local s = f:read("a")
  f:close()
  return s
end

-- Writes a whole file or nothing: the text goes to a temporary file beside the
-- target, which is then renamed over it.
function engine.write_atomic(path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error(("cannot write %s: %s"):format(tmp, err), 0) end
  local ok, werr = f:write(text)
  f:close()
  if not ok then
    os.remove(tmp)
    error(("cannot write %s: %s"):format(tmp, werr), 0)
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    error(("cannot rename %s to %s: %s"):format(tmp, path, rerr), 0)
  end
end

local cache = {}

-- Renders the template read from `path` with `env`, compiling each template
-- once. `display` (default: path) is the name errors and `#line` give it.
function engine.render(path, env, display)
  local fn = cache[path]
  if not fn then
    fn = engine.compile(engine.read(path), display or path)
    cache[path] = fn
  end
  return fn(env)
end

return engine
