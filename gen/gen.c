/*
 * gen: kiln's kernel generator. A small C driver around an embedded Lua 5.4
 * that runs the template engine (gen/engine.lua) over the variant space
 * (gen/variants.lua); gen/main.lua holds the commands.
 *
 *   gen --lib DIR [--root DIR] COMMAND ...
 *
 * --lib names the folder that holds main.lua and engine.lua; --root the
 * repository root that template and output paths are relative to. Errors go
 * to stderr as "file:line: message" and the exit status is 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static int usage(void)
{
    fprintf(stderr, "usage: gen --lib DIR [--root DIR] list|render|table|generated|check|template ...\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *lib = NULL;
    int first = 1;
    if (argc >= 3 && strcmp(argv[1], "--lib") == 0) {
        lib = argv[2];
        first = 3;
    }
    if (lib == NULL) return usage();

    lua_State *L = luaL_newstate();
    if (L == NULL) {
        fprintf(stderr, "gen: cannot create a Lua state (out of memory)\n");
        return 1;
    }
    luaL_openlibs(L);

    lua_pushstring(L, lib);
    lua_setglobal(L, "GEN_LIB");
    lua_createtable(L, argc - first, 0);
    for (int i = first; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - first + 1);
    }
    lua_setglobal(L, "GEN_ARGS");

    size_t n = strlen(lib) + sizeof("/main.lua");
    char *main_path = malloc(n);
    if (main_path == NULL) {
        fprintf(stderr, "gen: out of memory\n");
        lua_close(L);
        return 1;
    }
    snprintf(main_path, n, "%s/main.lua", lib);
    int rc = luaL_dofile(L, main_path);
    free(main_path);
    if (rc != LUA_OK) {
        fprintf(stderr, "gen: %s\n", lua_tostring(L, -1));
        lua_close(L);
        return 1;
    }
    lua_close(L);
    return 0;
}
